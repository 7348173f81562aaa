import BlueZ
import BridgeCore
import CentralBridge
import DBus
import Logging
import MQTTCore
import Mosquitto
import ServiceLifecycle

/// Publishes `<base>/bridge/<gateway_id>/health` (retained, QoS 1): checked every 2 s, published when anything but
/// the uptime changed and every `interval` otherwise. It reads what is already there: BlueZ's name on the bus, the
/// central bridge's object tree, the MQTT clients' statistics, the last error logged.
struct HealthPublisher: Service, CustomStringConvertible {
    /// The name ServiceLifecycle logs it by (without one it would describe every stored property by reflection).
    var description: String { "health publisher" }

    let topic: String
    let interval: Duration
    let mqtt: MosquittoClient
    let clients: [(name: String, client: MosquittoClient)]
    let bus: DBusConnection
    /// The adapter's state and devices from the central bridge's tree (nil while it has none).
    let adapterHealth: @Sendable () async -> AdapterHealth?
    let errors: LastErrorLog
    /// The devices the central bridge owns in its fleet; nil without one.
    let devicesOwned: @Sendable () -> Int?
    let logger: Logger
    static let checkInterval: Duration = .seconds(2)

    func run() async throws {
        do {
            try await cancelWhenGracefulShutdown {
                var schedule = HealthSchedule(interval: interval)
                while !Task.isCancelled {
                    let report = await sample()
                    if schedule.shouldPublish(report, now: errors.uptime) {
                        do {
                            try await mqtt.publish(
                                MQTTMessage(topic: topic, payload: report.payload, qos: .atLeastOnce, retain: true))
                        } catch {
                            // Not connected yet, or reconnecting: try again at the next check.
                            schedule = HealthSchedule(interval: interval)
                            logger.debug("health.publish.failed", metadata: ["error": "\(error)"])
                        }
                    }
                    try await Task.sleep(for: Self.checkInterval)
                }
            }
        } catch is CancellationError {
            // Shutting down: the retained health stays as last published; bridge/state says offline.
        }
    }

    private func sample() async -> HealthReport {
        let bluezPresent = (try? await bus.nameHasOwner(BlueZName.service)) ?? false
        let adapter = bluezPresent ? await adapterHealth() : nil
        var queues: [HealthReport.Queue] = []
        var reconnects = 0
        for (name, client) in clients {
            let statistics = await client.currentStatistics
            let suffix = name == "main" ? "" : "_\(name)"
            queues.append(.init(name: "mqtt_outstanding" + suffix, depth: statistics.outstandingPublishes))
            queues.append(.init(name: "mqtt_inbound" + suffix, depth: statistics.inboundBuffered))
            if name == "main" { reconnects = max(0, statistics.connects - 1) }
        }
        return HealthReport(
            uptimeSeconds: Int(errors.uptime.components.seconds), bluezPresent: bluezPresent,
            adapterPowered: adapter?.powered ?? false, brokerReconnects: reconnects,
            devicesKnown: adapter?.devicesKnown ?? 0, devicesConnected: adapter?.devicesConnected ?? 0,
            devicesOwned: devicesOwned(), queues: queues,
            lastError: errors.lastError)
    }
}
