import BlueZ
import BridgeCore
import Logging
import MQTTCore

/// Publishes the notifications of one AcquireNotify socket to the characteristic's value topic.
///
/// The hot path: the socket is read on the MQTT client's own queue and each batch is decoded and handed to
/// libmosquitto right there (`publishOnQueue`), with no hop through the bridge actor or the task pool. When the
/// client has no capacity (outstanding QoS 1 publishes at their bound, or a full output buffer) the rest of the
/// batch waits here and the socket pauses until capacity returns.
///
/// @unchecked Sendable: `pending` and `suppress` are only touched on the MQTT client's queue (the socket's event
/// handler and the client's capacity callback both run there).
final class NotificationPublisher: @unchecked Sendable {
    private let route: CharacteristicRoute
    private let mqtt: any MQTTClient
    private let store: CentralStateStore
    private let metrics: CentralMetrics
    private var socket: NotificationSocket?
    /// Decoded messages the client had no room for yet.
    private var pending: ArraySlice<MQTTMessage> = []
    /// After a restart, a first value equal to the one already retained is not published again.
    private var suppress: [UInt8]?

    init(route: CharacteristicRoute, mqtt: any MQTTClient, store: CentralStateStore, metrics: CentralMetrics) {
        self.route = route
        self.mqtt = mqtt
        self.store = store
        self.metrics = metrics
        suppress = route.retain ? store.lastValue(of: route.valueTopic) : nil
    }

    /// Starts reading `fd` (owned from now on) on the MQTT client's queue. `onHangUp` runs when bluetoothd closes
    /// its end (not when Gattway closes the socket).
    func start(fd: Int32, mtu: UInt16, onHangUp: @escaping @Sendable () -> Void) -> NotificationSocket {
        let socket = NotificationSocket(
            fd: fd, mtu: mtu, queue: mqtt.publishQueue, onBatch: { [self] batch in self.handle(batch) },
            onClose: { peerHungUp in if peerHungUp { onHangUp() } })
        self.socket = socket
        return socket
    }

    /// Runs on the MQTT client's queue. Returns false to pause the socket.
    private func handle(_ batch: NotificationSocket.Batch) -> Bool {
        var messages: [MQTTMessage] = []
        messages.reserveCapacity(batch.count)
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
        if let lastRaw { store.setLastValue(lastRaw, of: route.valueTopic) }
        pending.append(contentsOf: messages)
        return publishPending()
    }

    /// Offers what is pending to the client; true when all of it was taken.
    private func publishPending() -> Bool {
        guard !pending.isEmpty else { return true }
        let result = mqtt.publishOnQueue(pending) { [self] in
            if self.publishPending() { self.socket?.resume() }
        }
        pending = pending.dropFirst(result.taken)
        metrics.notifications.increment(by: result.taken - result.failed)
        if result.failed > 0 { metrics.notificationsDropped.increment(by: result.failed) }
        return pending.isEmpty
    }
}
