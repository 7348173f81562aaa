import BridgeCore
import DBus
import Logging
import MQTTCore
import Metrics
import Mosquitto
import ServiceLifecycle

/// Publishes a snapshot of every metric to `<base>/bridge/metrics` every `interval` (QoS 0, not retained: a
/// snapshot is only news when it is fresh), with the MQTT clients' and the D-Bus connection's own counters added as
/// gauges just before.
struct MetricsPublisher: Service {
    let factory: MetricsSnapshotFactory
    let interval: Duration
    let topic: String
    let mqtt: MosquittoClient
    /// Every MQTT client of this process, by the name its gauges carry (`main`, `peripheral`).
    let clients: [(name: String, client: MosquittoClient)]
    let bus: DBusConnection
    let logger: Logger

    func run() async throws {
        do {
            try await cancelWhenGracefulShutdown {
                while !Task.isCancelled {
                    try await Task.sleep(for: interval)
                    await publish()
                }
            }
        } catch is CancellationError {
            // Shutting down: a clean end. Throwing would make the service group cancel every other service
            // before they could say goodbye (bridge/state offline, devices disconnected).
        }
    }

    private func publish() async {
        for (name, client) in clients {
            let statistics = await client.currentStatistics
            let dimensions = [("connection", name)]
            Gauge(label: "gattway.mqtt.messages_published", dimensions: dimensions).record(statistics.messagesPublished)
            Gauge(label: "gattway.mqtt.messages_received", dimensions: dimensions).record(statistics.messagesReceived)
            Gauge(label: "gattway.mqtt.publishes_refused", dimensions: dimensions).record(statistics.publishesRefused)
            Gauge(label: "gattway.mqtt.outstanding_publishes", dimensions: dimensions).record(statistics.outstandingPublishes)
            Gauge(label: "gattway.mqtt.connects", dimensions: dimensions).record(statistics.connects)
            Gauge(label: "gattway.mqtt.read_pauses", dimensions: dimensions).record(statistics.readPauses)
            Gauge(label: "gattway.mqtt.inbound_buffered", dimensions: dimensions).record(statistics.inboundBuffered)
        }
        Gauge(label: "gattway.dbus.signals_dropped").record(bus.droppedSignalCount)
        Gauge(label: "gattway.dbus.calls_refused").record(bus.refusedCallCount)
        do {
            try await mqtt.publish(MQTTMessage(topic: topic, payload: factory.snapshotJSON(), qos: .atMostOnce))
        } catch {
            logger.debug("metrics.publish.failed", metadata: ["error": "\(error)"])
        }
    }
}
