import BridgeCore
import CoreMetrics
import MQTTCore

/// The one way a characteristic's values become MQTT messages, whichever path brought them (a notification
/// channel's batch or a value the central announced by itself under StartNotify, or a read's echo).
///
/// Each value is decoded with the route's codec (undecodable ones are counted and left out), then de-duplicated
/// by the state store's single rule: on a retained topic, the run's first value equal to the one remembered from
/// the last run is not published again (the broker still holds it); every other value is published, repeats
/// included, because a repeated notification is news (a button pressed twice).
struct ValuePipeline: Sendable {
    let route: CharacteristicRoute
    let store: CentralStateStore
    let metrics: CentralMetrics

    /// The message for one value (a StartNotify notification), or nil when it is not published (undecodable,
    /// counted; or the remembered value of a retained topic); callable from any thread. `appendMessages(for:to:)`
    /// for one value, without the arrays a batch needs.
    func message(for value: [UInt8]) -> MQTTMessage? {
        guard let payload = try? route.characteristic.codec.decode(value) else {
            metrics.decodeFailures.increment()
            return nil
        }
        guard store.recordPublication(of: value, on: route.valueTopic, retained: route.retain) else { return nil }
        return MQTTMessage(topic: route.valueTopic, payload: payload, qos: route.qos, retain: route.retain)
    }

    /// Appends the messages for `values` to `messages`, in order; callable from any thread. Appending lets the
    /// hot path keep one array of messages between batches instead of allocating one per notification.
    func appendMessages(for values: [[UInt8]], to messages: inout [MQTTMessage]) {
        // A batch of one (a notification at a time, the usual case below a few thousand a second) needs none of
        // the arrays below.
        if values.count == 1 {
            if let message = message(for: values[0]) { messages.append(message) }
            return
        }
        var decoded: [(raw: [UInt8], payload: [UInt8])] = []
        decoded.reserveCapacity(values.count)
        for value in values {
            guard let payload = try? route.characteristic.codec.decode(value) else {
                metrics.decodeFailures.increment()
                continue
            }
            decoded.append((value, payload))
        }
        let kept = store.recordPublications(of: decoded.map(\.raw), on: route.valueTopic, retained: route.retain)
        let skipped = decoded.count - kept.count
        for value in decoded[skipped...] {
            messages.append(
                MQTTMessage(topic: route.valueTopic, payload: value.payload, qos: route.qos, retain: route.retain))
        }
    }
}
