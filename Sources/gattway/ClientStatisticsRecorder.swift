import BridgeCore
import DBus
import Metrics
import Mosquitto
import Synchronization

/// Records the MQTT clients' and the D-Bus connection's own statistics as metrics: running totals as counters
/// (by their growth since the last reading), levels as gauges. Shared by every reader (`bridge/metrics`, the
/// Prometheus endpoint), so that a total is never counted twice.
final class ClientStatisticsRecorder: Sendable {
    /// Every MQTT client of this process, by the name its metrics carry (`main`, `peripheral`).
    let clients: [(name: String, client: MosquittoClient)]
    let bus: DBusConnection
    private let totals = Mutex(CumulativeTotals())

    init(clients: [(name: String, client: MosquittoClient)], bus: DBusConnection) {
        self.clients = clients
        self.bus = bus
    }

    func record() async {
        for (name, client) in clients {
            let statistics = await client.currentStatistics
            let dimensions = [("connection", name)]
            count("gattway.mqtt.messages_published", statistics.messagesPublished, dimensions)
            count("gattway.mqtt.messages_received", statistics.messagesReceived, dimensions)
            count("gattway.mqtt.publishes_refused", statistics.publishesRefused, dimensions)
            count("gattway.mqtt.connects", statistics.connects, dimensions)
            count("gattway.mqtt.read_pauses", statistics.readPauses, dimensions)
            // QoS 0 messages taken but not yet written when their link went: dropped, never sent.
            count("gattway.mqtt.messages_lost_with_link", statistics.messagesLostWithLink, dimensions)
            Gauge(label: "gattway.mqtt.outstanding_publishes", dimensions: dimensions).record(
                statistics.outstandingPublishes)
            Gauge(label: "gattway.mqtt.inbound_buffered", dimensions: dimensions).record(statistics.inboundBuffered)
        }
        count("gattway.dbus.signals_dropped", bus.droppedSignalCount, [])
        count("gattway.dbus.calls_refused", bus.refusedCallCount, [])
    }

    private func count(_ label: String, _ total: Int, _ dimensions: [(String, String)]) {
        let key = label + dimensions.map { "|\($0.0)=\($0.1)" }.joined()
        let increment = totals.withLock { $0.increment(for: key, total: total) }
        Counter(label: label, dimensions: dimensions).increment(by: increment)
    }
}
