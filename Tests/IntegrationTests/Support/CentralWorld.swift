import Foundation
import TestWorld

/// Everything an end-to-end test of the central bridge needs, all real: the BlueZ simulator running a scenario,
/// a mosquitto broker, the built `gattway` binary with a configuration, and a `mosquitto_sub` watching `gattway/#`.
final class CentralWorld: EndToEndWorld {
    let simulator: BlueZSimulatorProcess
    let broker: MosquittoBroker
    let observer: MQTTObserver
    let control: SimulatorControl
    let directory: String
    let configPath: String
    let gattway: ChildProcess

    /// Starts the world. `config` is the YAML body after the `mqtt:` section, which the world writes itself;
    /// `prepare` runs against the simulator before gattway starts (to inject faults, say); `observed` are the
    /// filters the observer watches (narrower ones keep huge test payloads out of the test process).
    init(
        scenario: String, config: String, extraMQTT: String = "", observed: [String] = ["gattway/#"],
        prepare: @Sendable (SimulatorControl) async throws -> Void = { _ in }
    ) async throws {
        simulator = try await BlueZSimulatorProcess(scenario: scenario)
        broker = try await MosquittoBroker()
        directory = try makeTemporaryDirectory("gattway-e2e")
        configPath = directory + "/config.yaml"
        let yaml = """
            mqtt:
              url: "mqtt://127.0.0.1:\(broker.port)"
              base_topic: gattway
              client_id: gattway-e2e
            \(extraMQTT)
            state_dir: "\(directory)/state"
            \(config)
            """
        try yaml.write(toFile: configPath, atomically: true, encoding: .utf8)
        observer = try await MQTTObserver(port: broker.port, filters: observed)
        control = try await SimulatorControl.connect(to: simulator)
        try await prepare(control)
        gattway = try GattwayBinary.start(
            config: configPath, environment: ["DBUS_SYSTEM_BUS_ADDRESS": simulator.busAddress])
    }

    /// Starts gattway again with the same configuration and state directory (after a stop).
    func restartGattway() throws -> ChildProcess {
        try GattwayBinary.start(config: configPath, environment: ["DBUS_SYSTEM_BUS_ADDRESS": simulator.busAddress])
    }

    func publish(_ topic: String, _ payload: String, extraArguments: [String] = []) async throws {
        try await MQTTObserver.publish(
            port: broker.port, topic: topic, payload: payload, extraArguments: extraArguments)
    }

    /// Stops everything; returns gattway's log for failure messages.
    func stop() async {
        await gattway.stop()
        await observer.stop()
        await control.close()
        await broker.stop()
        await simulator.stop()
    }

    var gattwayLog: String { gattway.errorOutput }
}

/// The demo's devices, as the end-to-end tests configure them.
enum Configs {
    static let strapAndLock = """
        bluetooth:
          adapter: hci0
          request_timeout: 3
          connect_timeout: 5
          reconnect: { initial: 0.2, max: 1 }
        devices:
          - name: chest-strap
            address: "C4:7C:8D:6A:3E:11"
            characteristics:
              - { name: heart_rate, service: "180D", uuid: "2A37", notify: true, codec: heart_rate_measurement }
              - { name: control, service: "180D", uuid: "2A39", write: with_response, codec: hex }
          - name: lock
            address: "D0:0D:10:C4:00:01"
            characteristics:
              - { name: control, service: "0000fff0-0000-1000-8000-00805f9b34fb", uuid: "0000fff1-0000-1000-8000-00805f9b34fb", write: with_response, codec: utf8 }
              - { name: state, service: "0000fff0-0000-1000-8000-00805f9b34fb", uuid: "0000fff2-0000-1000-8000-00805f9b34fb", notify: true, read: true, codec: utf8 }
          - name: thermometer
            match: { service: "FCD2" }
            connect: never
        """
}
