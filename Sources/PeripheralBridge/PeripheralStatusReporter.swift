import BridgeCore
import MQTTCore
import Metrics
import Synchronization

/// Builds the retained `<base>/peripheral/status` JSON (queue depth, drops, notifications and indications sent,
/// subscribers, per characteristic) and keeps the swift-metrics gauges and counters in step. Called once a
/// second, so the hot path only touches its own counters.
final class PeripheralStatusReporter: Sendable {
    private let channels: [CharacteristicChannel]
    private let topic: String
    private let state = Mutex(State())
    private let metrics: [CharacteristicMetrics]

    private struct State: Sendable {
        var advertising = false
        var registered = false
        var centrals = 0
        var lastPayload: [UInt8] = []
        var forced = true
        var reported: [CharacteristicChannel.Snapshot] = []
    }

    private struct CharacteristicMetrics: Sendable {
        let queueDepth: Gauge
        let subscribers: Gauge
        let drops: Counter
        let notifications: Counter
        let indications: Counter
        let truncated: Counter

        init(_ name: String) {
            let dimensions = [("characteristic", name)]
            queueDepth = Gauge(label: "gattway.peripheral.queue_depth", dimensions: dimensions)
            subscribers = Gauge(label: "gattway.peripheral.subscribers", dimensions: dimensions)
            drops = Counter(label: "gattway.peripheral.drops", dimensions: dimensions)
            notifications = Counter(label: "gattway.peripheral.notifications", dimensions: dimensions)
            indications = Counter(label: "gattway.peripheral.indications", dimensions: dimensions)
            truncated = Counter(label: "gattway.peripheral.truncated", dimensions: dimensions)
        }
    }

    init(channels: [CharacteristicChannel], topic: String) {
        self.channels = channels
        self.topic = topic
        metrics = channels.map { CharacteristicMetrics($0.name) }
        state.withLock { $0.reported = Array(repeating: .init(), count: channels.count) }
    }

    func update(advertising: Bool, registered: Bool, centrals: Int) {
        state.withLock {
            $0.advertising = advertising
            $0.registered = registered
            $0.centrals = centrals
        }
    }

    func markDirty() { state.withLock { $0.forced = true } }

    /// The status message when something changed since the last one (at most once a second by the caller).
    func messageIfChanged() -> MQTTMessage? {
        let snapshots = channels.map(\.snapshot)
        return state.withLock { state -> MQTTMessage? in
            for (index, snapshot) in snapshots.enumerated() {
                let before = state.reported[index]
                let metric = metrics[index]
                metric.queueDepth.record(snapshot.queueDepth)
                metric.subscribers.record(snapshot.subscribers)
                metric.drops.increment(by: max(0, snapshot.drops - before.drops))
                metric.notifications.increment(by: max(0, snapshot.notifications - before.notifications))
                metric.indications.increment(by: max(0, snapshot.indications - before.indications))
                metric.truncated.increment(by: max(0, snapshot.truncated - before.truncated))
            }
            state.reported = snapshots
            var writer = JSONWriter(reservingCapacity: 256)
            writer.beginObject()
            writer.field("registered", state.registered)
            writer.field("advertising", state.advertising)
            writer.field("centrals", state.centrals)
            writer.key("characteristics")
            writer.beginObject()
            for (index, snapshot) in snapshots.enumerated() {
                writer.key(JSONObjectKey(text: channels[index].name))
                writer.beginObject()
                writer.field("queue_depth", snapshot.queueDepth)
                writer.field("drops", snapshot.drops)
                writer.field("notifications", snapshot.notifications)
                writer.field("indications", snapshot.indications)
                writer.field("truncated", snapshot.truncated)
                writer.field("subscribers", snapshot.subscribers)
                writer.field("subscribers_dropped", snapshot.subscribersDropped)
                writer.endObject()
            }
            writer.endObject()
            writer.endObject()
            let payload = writer.bytes
            guard state.forced || payload != state.lastPayload else { return nil }
            state.forced = false
            state.lastPayload = payload
            return MQTTMessage(topic: topic, payload: payload, qos: .atLeastOnce, retain: true)
        }
    }
}
