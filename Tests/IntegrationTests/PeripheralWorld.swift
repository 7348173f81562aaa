import DBus
import Foundation
import Logging
import TestWorld

/// Everything an end-to-end test of the local peripheral needs: the simulator (whose remote central plays the
/// phone), mosquitto, the built gattway binary with a `peripheral` section, and a mosquitto_sub on `test/#`.
final class PeripheralWorld: EndToEndWorld {
    let simulator: BlueZSimulatorProcess
    let broker: MosquittoBroker
    let observer: MQTTObserver
    let control: SimulatorControl
    let directory: String
    let gattway: ChildProcess

    static let service = "6e400001-b5a3-f393-e0a9-e50e24dcca9e"
    static let tx = "6e400003-b5a3-f393-e0a9-e50e24dcca9e"
    static let rx = "6e400002-b5a3-f393-e0a9-e50e24dcca9e"
    static let central = "11:22:33:44:55:66"

    /// `extraMQTT` lines go into the `mqtt:` section (indented two spaces); `extraCharacteristics` are YAML list
    /// items appended to the service's characteristics (indented like them); `extraPeripheral` is one line of the
    /// `peripheral:` section. `simulatorArguments` go to the simulator (`--bluez-version 5.47`, say).
    init(
        whenFull: String = "backpressure", depth: Int = 16, maxConnections: Int? = nil, extraMQTT: String = "",
        extraCharacteristics: String = "", extraPeripheral: String = "", simulatorArguments: [String] = []
    ) async throws {
        simulator = try await BlueZSimulatorProcess(scenario: "lock.yaml", extraArguments: simulatorArguments)
        broker = try await MosquittoBroker()
        directory = try makeTemporaryDirectory("gattway-peripheral")
        let yaml = """
            mqtt:
              url: "mqtt://127.0.0.1:\(broker.port)"
              base_topic: gattway
              client_id: gattway-periph
            \(extraMQTT)
            state_dir: "\(directory)/state"
            bluetooth: { adapter: hci0 }
            peripheral:
              adapter: hci0
              \(maxConnections.map { "max_connections: \($0)" } ?? "")
              \(extraPeripheral)
              advertise: { local_name: gw-test, service_uuids: ["\(Self.service)"] }
              services:
                - uuid: "\(Self.service)"
                  characteristics:
                    - uuid: "\(Self.tx)"
                      name: tx
                      flags: [read, notify]
                      source_topic: test/tx
                      codec: utf8
                      queue: { depth: \(depth), when_full: \(whenFull) }
                    - uuid: "\(Self.rx)"
                      name: rx
                      flags: [write]
                      sink_topic: test/rx
                      codec: hex
                      max_length: 64
            \(extraCharacteristics)
            """
        try yaml.write(toFile: directory + "/config.yaml", atomically: true, encoding: .utf8)
        observer = try await MQTTObserver(port: broker.port, filters: ["test/rx", "gattway/#"])
        control = try await SimulatorControl.connect(to: simulator)
        gattway = try GattwayBinary.start(
            config: directory + "/config.yaml", environment: ["DBUS_SYSTEM_BUS_ADDRESS": simulator.busAddress])
    }

    /// Starts gattway again with the same configuration and state directory (after a stop).
    func restartGattway() throws -> ChildProcess {
        try GattwayBinary.start(
            config: directory + "/config.yaml", environment: ["DBUS_SYSTEM_BUS_ADDRESS": simulator.busAddress])
    }

    func centralCall(_ method: String, _ arguments: [DBusValue]) async throws -> [DBusValue] {
        try await control.connection.call(
            destination: "org.gattway.Simulator1", path: "/org/gattway/simulator/central",
            interface: "org.gattway.Simulator1.Central", method: method, arguments: arguments, timeout: .seconds(30))
    }

    /// Waits until gattway's application is registered on hci0.
    func waitForApplication(timeout: Duration = .seconds(30)) async throws {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            let json = try await centralCall("GetApplications", []).first?.string ?? "[]"
            if json.contains(Self.tx) { return }
            try await Task.sleep(for: .milliseconds(100))
        }
        throw TestWorldError("gattway's GATT application was not registered within \(timeout)")
    }

    func connectCentral(_ address: String = PeripheralWorld.central, rate: Double = 0, buffer: UInt32 = 32) async throws
    {
        _ = try await centralCall(
            "Connect",
            [
                .string(address),
                .stringVariantDictionary([
                    "mtu": .uint16(64), "rate": .double(rate), "buffer": .uint32(buffer),
                ]),
            ])
    }

    func received(
        limit: UInt32 = 0, central: String = PeripheralWorld.central, characteristic: String = PeripheralWorld.tx
    ) async throws -> [[UInt8]] {
        let reply = try await centralCall("GetReceived", [.string(central), .string(characteristic), .uint32(limit)])
        return reply.first?.arrayElements?.compactMap(\.bytes) ?? []
    }

    /// Waits until the remote central has received at least `count` notifications of tx; returns them all.
    func waitForReceived(count: Int, timeout: Duration = .seconds(30)) async throws -> [[UInt8]] {
        let deadline = ContinuousClock.now + timeout
        var received: [[UInt8]] = []
        while ContinuousClock.now < deadline {
            received += try await self.received()
            if received.count >= count { return received }
            try await Task.sleep(for: .milliseconds(50))
        }
        throw TestWorldError("the central received \(received.count) of \(count) notifications within \(timeout)")
    }

    func publish(_ topic: String, _ payload: String, retain: Bool = false) async throws {
        try await MQTTObserver.publish(port: broker.port, topic: topic, payload: payload, retain: retain)
    }

    var gattwayLog: String { gattway.errorOutput }

    func stop() async {
        await gattway.stop()
        await observer.stop()
        await control.close()
        await broker.stop()
        await simulator.stop()
    }
}
