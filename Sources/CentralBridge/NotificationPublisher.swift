import BlueZ
import BridgeCore
import Logging
import MQTTCore
import Mosquitto

/// Publishes the notifications of one AcquireNotify socket to the characteristic's value topic.
///
/// The hot path: one batch per socket wake-up, decoded and published with one call to the MQTT client, with no
/// hop through the bridge actor.
struct NotificationPublisher: Sendable {
    let route: CharacteristicRoute
    let mqtt: MosquittoClient
    let store: CentralStateStore
    let metrics: CentralMetrics
    let logger: Logger

    func run(_ socket: NotificationSocket) async {
        // After a restart, a first value equal to the one already retained is not published again.
        var suppress = route.retain ? store.lastValue(of: route.valueTopic) : nil
        var messages: [MQTTMessage] = []
        for await batch in socket.batches {
            messages.removeAll(keepingCapacity: true)
            var lastRaw: [UInt8]?
            for value in batch {
                if let previous = suppress {
                    suppress = nil
                    if previous == value { continue }
                }
                guard let payload = try? route.characteristic.codec.decode(value) else {
                    metrics.decodeFailures.increment()
                    continue
                }
                messages.append(MQTTMessage(topic: route.valueTopic, payload: payload, qos: route.qos, retain: route.retain))
                lastRaw = value
            }
            suppress = nil
            guard !messages.isEmpty else { continue }
            do {
                try await mqtt.publish(contentsOf: messages)
                metrics.notifications.increment(by: messages.count)
            } catch {
                metrics.notificationsDropped.increment(by: messages.count)
                logger.debug("mqtt.publish.failed", metadata: ["mqtt.topic": "\(route.valueTopic)", "error": "\(error)"])
            }
            if let lastRaw { store.setLastValue(lastRaw, of: route.valueTopic) }
        }
        let counters = socket.currentCounters
        if counters.droppedNotifications > 0 {
            metrics.notificationsDropped.increment(by: counters.droppedNotifications)
        }
    }
}
