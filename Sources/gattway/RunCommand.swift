public import ArgumentParser
import BlueZ
import BridgeCore
import CentralBridge
import DBus
public import Logging
import MQTTCore
import Metrics
import Mosquitto
import PeripheralBridge
import ServiceLifecycle
import UnixSignals

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// `gattway run --config FILE`: the daemon. Runs until SIGTERM or SIGINT, then stops cleanly: devices are
/// disconnected and published offline, and `bridge/state` becomes `offline`.
struct RunCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "run", abstract: "Run the bridge.")

    @Option(name: .long, help: "The YAML configuration file.")
    var config: String

    @Option(
        name: .long, help: "trace, debug, info, notice, warning, error or critical (overrides the file's log_level).")
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
        let errors = LastErrorLog()
        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = level
            return ErrorRecordingLogHandler(inner: handler, errors: errors)
        }
        let logger = Logger(label: "gattway")
        LoaderTablesRelease.drop(when: "starting", logger: logger)
        for warning in SecretFilePermissions.warnings(for: configuration) {
            logger.warning("config.secret.exposed", metadata: ["warning": "\(warning)"])
        }
        // Before any service exists: metrics bind to the backend when they are created.
        let metrics = MetricsSnapshotFactory()
        let prometheus = configuration.metrics.prometheusListen.map { _ in PrometheusExport() }
        if let prometheus {
            MetricsSystem.bootstrap(MultiplexMetricsHandler(factories: [metrics, prometheus.factory]))
        } else {
            MetricsSystem.bootstrap(metrics)
        }
        let mqttOptions: MosquittoClient.Options
        do {
            mqttOptions = try MQTTOptionsFactory.options(for: configuration)
        } catch {
            printError("gattway: \(error)")
            throw ExitCode(2)
        }
        let mqtt = try MosquittoClient(options: mqttOptions, logger: Logger(label: "gattway.mqtt"))
        let bus: DBusConnection
        do {
            // The bus shares the MQTT client's loop: a StartNotify value is read, decoded and published in one
            // turn of one thread, instead of waking a second thread to publish. The price: while the client
            // connects to the broker (a blocking name lookup and TCP connect) D-Bus messages wait in the socket;
            // none is lost.
            //
            // Gattway reads the bus itself (libdbus behind a relay) unless the local peripheral is on: its
            // notifications are signals it sends, and through the relay each would take two system calls more.
            bus = try await DBusConnection.connect(
                to: .system, name: "bluez", loop: mqtt.publishLoop,
                reader: configuration.peripheral == nil ? .fromEnvironment : .libdbus,
                logger: Logger(label: "gattway.dbus"))
        } catch {
            printError(
                "gattway: cannot connect to the system bus (is dbus running? DBUS_SYSTEM_BUS_ADDRESS=\(ProcessInfo.processInfo.environment["DBUS_SYSTEM_BUS_ADDRESS"] ?? "unset")): \(error)"
            )
            throw ExitCode(3)
        }
        let bluez = BlueZClient(connection: bus, logger: Logger(label: "gattway.bluez"))
        let bindkeys: [Int: Bindkey]
        do {
            bindkeys = try BindkeyLoader.load(configuration.devices)
        } catch {
            printError("gattway: \(error)")
            throw ExitCode(2)
        }
        let central = CentralBridge(
            configuration: configuration, central: BlueZCentral(client: bluez), mqtt: mqtt,
            version: GattwayVersion.current,
            bindkeys: bindkeys, openAESCCM: BindkeyLoader.openAESCCM, logger: Logger(label: "gattway.central"))
        let readiness = SystemdReadiness(mqtt: mqtt, logger: Logger(label: "gattway"))
        var services: [ServiceGroupConfiguration.ServiceConfiguration] = [
            .init(service: mqtt), .init(service: central), .init(service: readiness),
            .init(service: ConfigurationReloader(path: config, central: central, logger: logger)),
        ]
        var clients = [(name: "main", client: mqtt)]
        if let peripheral = try peripheralServices(configuration: configuration, mqttOptions: mqttOptions, bus: bus) {
            services += peripheral.services
            clients.append((name: "peripheral", client: peripheral.client))
        }
        let statistics = ClientStatisticsRecorder(clients: clients, bus: bus)
        if configuration.mqtt.metricsIntervalSeconds > 0 {
            services.append(
                .init(
                    service: MetricsPublisher(
                        factory: metrics, interval: .seconds(configuration.mqtt.metricsIntervalSeconds),
                        topic: TopicLayout(configuration.mqtt).bridgeMetrics, mqtt: mqtt, statistics: statistics,
                        logger: logger)))
        }
        services.append(
            .init(
                service: HealthPublisher(
                    topic: TopicLayout(configuration.mqtt).bridgeHealth,
                    interval: .seconds(configuration.mqtt.healthIntervalSeconds),
                    mqtt: mqtt, clients: clients, bus: bus, adapterHealth: { await central.adapterHealth() },
                    errors: errors,
                    devicesOwned: { central.fleetOwnedDeviceCount }, logger: logger)))
        if let prometheus, let address = configuration.metrics.prometheusListen {
            services.append(
                .init(
                    service: PrometheusEndpoint(
                        address: address, registry: prometheus.registry, statistics: statistics,
                        logger: Logger(label: "gattway.prometheus"))))
        }
        var groupConfiguration = ServiceGroupConfiguration(
            services: services, gracefulShutdownSignals: [.sigterm, .sigint], logger: logger)
        // Stopping is bounded: what has not finished its graceful shutdown by then is cancelled, well within
        // systemd's stop timeout; the broker publishes the Last Will for a connection that could not say goodbye.
        groupConfiguration.maximumGracefulShutdownDuration = Self.gracefulShutdownLimit
        groupConfiguration.maximumCancellationDuration = Self.cancellationLimit
        let group = ServiceGroup(configuration: groupConfiguration)
        logger.notice("gattway.starting", metadata: ["config": "\(config)", "version": "\(GattwayVersion.current)"])
        try await group.run()
        await bus.close()
        logger.notice("gattway.stopped")
    }
}

extension RunCommand {
    /// How long the services have, together, to stop gracefully (disconnect devices, publish `offline`).
    static let gracefulShutdownLimit: Duration = .seconds(10)
    /// How long cancelled services have to return; past it ServiceLifecycle ends the process.
    static let cancellationLimit: Duration = .seconds(5)
}

// swift-format-ignore: AvoidRetroactiveConformances
// `--log-level` takes swift-log's levels by name; neither package can declare this conformance for the other.
extension Logger.Level: @retroactive ExpressibleByArgument {}

// MARK: - Local peripheral

extension RunCommand {
    /// The local peripheral and its own MQTT connection (client id `<client_id>-peripheral`), so that its
    /// backpressure pauses never stall the central bridge's connection. Nil without a `peripheral` section.
    func peripheralServices(
        configuration: BridgeConfiguration, mqttOptions: MosquittoClient.Options, bus: DBusConnection
    ) throws -> (services: [ServiceGroupConfiguration.ServiceConfiguration], client: MosquittoClient)? {
        guard configuration.peripheral != nil else { return nil }
        var options = mqttOptions
        options.clientID += "-peripheral"
        // The main connection owns bridge/state and its Last Will.
        options.will = nil
        options.shutdownMessages = []
        // A small inbound buffer so a full notification queue pauses socket reads soon (memory stays flat).
        options.inboundBuffer = .init(highWater: 64, lowWater: 16)
        options.receiveMaximum = 32
        // Its own connection, on the bus's loop: a value is read from the broker and sent into a notification link
        // (or emitted as PropertiesChanged) in one turn of one thread.
        let client = try MosquittoClient(
            options: options, logger: Logger(label: "gattway.mqtt.peripheral"), loop: bus.loop)
        let logger = Logger(label: "gattway.peripheral")
        let peripheral = PeripheralBridge(
            configuration: configuration, server: BlueZGATTServer(connection: bus, logger: logger), mqtt: client,
            logger: logger)
        var services: [ServiceGroupConfiguration.ServiceConfiguration] = [
            .init(service: client), .init(service: peripheral),
        ]
        if configuration.peripheral?.needsPairing == true {
            services.append(
                .init(
                    service: PeripheralPairingService(
                        configuration: configuration, mqtt: client, logger: Logger(label: "gattway.peripheral.agent"))))
        }
        return (services, client)
    }
}

/// Tells systemd that the daemon is ready once the broker is connected, and that it is stopping on shutdown. Once
/// ready, the daemon drops its libraries' dynamic-linking tables from memory again (see `LoaderTablesRelease`).
struct SystemdReadiness: Service, CustomStringConvertible {
    /// The name ServiceLifecycle logs it by (without one it would describe every stored property by reflection).
    var description: String { "systemd readiness" }

    let mqtt: MosquittoClient
    let logger: Logger

    func run() async throws {
        // A broker that never answers must not hold up a stop: shutdown ends the wait, and READY=1 is then not sent.
        let connected: Void? = try? await cancelWhenGracefulShutdown {
            try await mqtt.waitUntilConnected(timeout: .seconds(86_400))
        }
        if connected != nil, !Task.isShuttingDownGracefully {
            SystemdNotifier.notify("READY=1")
            LoaderTablesRelease.drop(when: "ready", logger: logger)
            try? await gracefulShutdown()
        }
        SystemdNotifier.notify("STOPPING=1")
    }
}
