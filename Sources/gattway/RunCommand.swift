import ArgumentParser
import BlueZ
import BridgeCore
import CentralBridge
import DBus
import Foundation
import Logging
import MQTTCore
import Mosquitto
import ServiceLifecycle

/// `gattway run --config FILE`: the daemon. Runs until SIGTERM or SIGINT, then stops cleanly: devices are
/// disconnected and published offline, and `bridge/state` becomes `offline`.
struct RunCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "run", abstract: "Run the bridge.")

    @Option(name: .long, help: "The YAML configuration file.")
    var config: String

    @Option(name: .long, help: "trace, debug, info, notice, warning, error or critical (overrides the file's log_level).")
    var logLevel: Logger.Level?

    func run() async throws {
        let configuration: BridgeConfiguration
        do {
            configuration = try BridgeConfiguration.load(path: config)
        } catch {
            for problem in error.errors { printError("\(config): \(problem)") }
            throw ExitCode(2)
        }
        let level = logLevel ?? Logger.Level(rawValue: configuration.logLevel.rawValue) ?? .info
        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = level
            return handler
        }
        let logger = Logger(label: "gattway")
        let mqttOptions: MosquittoClient.Options
        do {
            mqttOptions = try MQTTOptionsFactory.options(for: configuration)
        } catch {
            printError("gattway: \(error)")
            throw ExitCode(2)
        }
        let mqtt = MosquittoClient(options: mqttOptions, logger: Logger(label: "gattway.mqtt"))
        let bus: DBusConnection
        do {
            bus = try await DBusConnection.connect(to: .system, name: "bluez", logger: Logger(label: "gattway.dbus"))
        } catch {
            printError("gattway: cannot connect to the system bus (is dbus running? DBUS_SYSTEM_BUS_ADDRESS=\(ProcessInfo.processInfo.environment["DBUS_SYSTEM_BUS_ADDRESS"] ?? "unset")): \(error)")
            throw ExitCode(3)
        }
        let bluez = BlueZClient(connection: bus, logger: Logger(label: "gattway.bluez"))
        let central = CentralBridge(
            configuration: configuration, bluez: bluez, mqtt: mqtt, version: GattwayVersion.current,
            logger: Logger(label: "gattway.central"))
        let readiness = SystemdReadiness(mqtt: mqtt)
        let group = ServiceGroup(
            configuration: .init(
                services: [.init(service: mqtt), .init(service: central), .init(service: readiness)],
                gracefulShutdownSignals: [.sigterm, .sigint],
                logger: logger))
        logger.notice("gattway.starting", metadata: ["config": "\(config)", "version": "\(GattwayVersion.current)"])
        try await group.run()
        await bus.close()
        logger.notice("gattway.stopped")
    }
}

extension Logger.Level: @retroactive ExpressibleByArgument {}

/// Tells systemd that the daemon is ready once the broker is connected, and that it is stopping on shutdown.
struct SystemdReadiness: Service {
    let mqtt: MosquittoClient

    func run() async throws {
        try? await mqtt.waitUntilConnected(timeout: .seconds(86_400))
        SystemdNotifier.notify("READY=1")
        try? await gracefulShutdown()
        SystemdNotifier.notify("STOPPING=1")
    }
}
