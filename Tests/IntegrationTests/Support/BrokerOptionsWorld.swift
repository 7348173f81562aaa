import Foundation
import TestWorld

/// The built gattway binary against a mosquitto configured as a test needs it (a password file, TLS), with the
/// test writing the whole `mqtt:` section itself; the simulator plays the demo's devices.
final class BrokerOptionsWorld: EndToEndWorld {
    let simulator: BlueZSimulatorProcess
    let broker: MosquittoBroker
    let observer: MQTTPropertyObserver
    let directory: String
    let gattway: ChildProcess

    /// `mqtt` is the YAML body of the `mqtt:` section, given the broker (its port, url and certificates) and the
    /// world's folder; `observe` says how a subscriber reaches this broker.
    init(
        broker: MosquittoBroker, observe connection: MQTTPropertyObserver.Connection,
        environment: [String: String] = [:], prepare: (String) throws -> Void = { _ in },
        mqtt: (String) -> String
    ) async throws {
        self.broker = broker
        simulator = try await BlueZSimulatorProcess(scenario: "demo.yaml")
        directory = try makeTemporaryDirectory("gattway-broker-options")
        try prepare(directory)
        let yaml = """
            mqtt:
            \(mqtt(directory))
            state_dir: "\(directory)/state"
            \(Configs.strapAndLock)
            """
        try yaml.write(toFile: directory + "/config.yaml", atomically: true, encoding: .utf8)
        observer = try await MQTTPropertyObserver(connection, filters: ["gattway/#"])
        gattway = try GattwayBinary.start(
            config: directory + "/config.yaml",
            environment: environment.merging(["DBUS_SYSTEM_BUS_ADDRESS": simulator.busAddress]) { $1 })
    }

    var gattwayLog: String { gattway.errorOutput }

    func stop() async {
        await gattway.stop()
        await observer.stop()
        await broker.stop()
        await simulator.stop()
    }
}
