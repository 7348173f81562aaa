import BridgeCore
import Logging
import MQTTCore
import Mosquitto
import ServiceLifecycle

/// Publishes a snapshot of every metric to `<base>/bridge/metrics` every `interval` (QoS 0, not retained: a
/// snapshot is only news when it is fresh), with the MQTT clients' and the D-Bus connection's own statistics
/// recorded just before.
struct MetricsPublisher: Service, CustomStringConvertible {
    /// The name ServiceLifecycle logs it by (without one it would describe every stored property by reflection).
    var description: String { "metrics publisher" }

    let factory: MetricsSnapshotFactory
    let interval: Duration
    let topic: String
    let mqtt: MosquittoClient
    let statistics: ClientStatisticsRecorder
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
        await statistics.record()
        do {
            try await mqtt.publish(MQTTMessage(topic: topic, payload: factory.snapshotJSON(), qos: .atMostOnce))
        } catch {
            logger.debug("metrics.publish.failed", metadata: ["error": "\(error)"])
        }
    }
}
