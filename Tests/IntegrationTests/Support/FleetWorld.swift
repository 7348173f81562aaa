import BridgeCore
import DBus
import Foundation
import TestWorld

/// A fleet of three built `gattway` binaries (gateway ids gw0, gw1, gw2 on adapters hci0, hci1, hci2 of one
/// simulated bluetoothd running `fleet.yaml`), one broker (mosquitto, or a two-node RabbitMQ cluster with gw0 and
/// gw2 on the first node and gw1 on the second), a `mosquitto_sub` watching `gattway/#`, and the simulator's air
/// (`SimulatorRadio`) to move signals.
final class FleetWorld: EndToEndWorld {
    /// Where the gateways connect.
    enum Broker: Sendable {
        case mosquitto(MosquittoBroker)
        /// MQTT 3.1.1 only; retained messages stay on the node that received them.
        case rabbitMQ(RabbitMQCluster)

        /// The broker port gateway `index` (0, 1, 2) connects to: on a cluster, alternating nodes.
        func port(ofGateway index: Int) -> UInt16 {
            switch self {
            case .mosquitto(let broker): broker.port
            case .rabbitMQ(let cluster): cluster.nodes[index % cluster.nodes.count].mqttPort
            }
        }

        var isRabbitMQ: Bool { if case .rabbitMQ = self { true } else { false } }
        /// As mosquitto_sub and mosquitto_pub name it.
        var protocolVersion: String { isRabbitMQ ? "311" : "5" }
    }

    static let strap = "C4:7C:8D:6A:3E:11"
    static let lock = "D0:0D:10:C4:00:01"
    static let thermometer = "A4:C1:38:00:00:01"
    static let gatewayIDs = ["gw0", "gw1", "gw2"]

    let simulator: BlueZSimulatorProcess
    let broker: Broker
    /// Whether `stop()` stops the broker too (a cluster shared by several worlds outlives each).
    let stopsBroker: Bool
    let observer: MQTTObserver
    let radio: SimulatorRadio
    let control: SimulatorControl
    let directory: String
    /// Gateway id → its process; a gateway killed by a test stays here, stopped.
    let gateways: [String: ChildProcess]

    /// `fleet` is the body of every gateway's `fleet:` section.
    /// `broker` nil: a mosquitto of its own. The observer is on the last gateway's node, subscribed before any
    /// gateway starts (a cluster's retained messages do not cross nodes).
    init(fleet: String = "hold: 3", broker: Broker? = nil, stopsBroker: Bool = true) async throws {
        self.stopsBroker = stopsBroker
        simulator = try await BlueZSimulatorProcess(scenario: "fleet.yaml")
        if let broker { self.broker = broker } else { self.broker = .mosquitto(try await MosquittoBroker()) }
        directory = try makeTemporaryDirectory("gattway-fleet")
        observer = try await MQTTObserver(
            port: self.broker.port(ofGateway: 1), filters: ["gattway/#"], protocolVersion: self.broker.protocolVersion)
        radio = try await SimulatorRadio.connect(to: simulator)
        control = try await SimulatorControl.connect(to: simulator)
        // The devices come into range only once every gateway is up and scanning, so that all of them hear them at
        // about the same moment, as gateways that have long been running do (one that started first would
        // otherwise own everything until the hold time let the others contest it).
        var hearers: [String: [String]] = [:]
        for device in Self.devices {
            hearers[device] = try await radio.signals(device: device).keys.sorted()
            for adapter in hearers[device]! { try await radio.setHeard(device: device, adapter: adapter, heard: false) }
        }
        var gateways: [String: ChildProcess] = [:]
        for (index, id) in Self.gatewayIDs.enumerated() {
            let path = directory + "/\(id).yaml"
            try Self.configuration(
                id: id, adapter: Self.adapters[id]!, port: self.broker.port(ofGateway: index),
                protocolVersion: self.broker.isRabbitMQ ? "3.1.1" : "5", stateDirectory: directory + "/\(id)",
                fleet: fleet
            ).write(toFile: path, atomically: true, encoding: .utf8)
            gateways[id] = try GattwayBinary.start(
                config: path, environment: ["DBUS_SYSTEM_BUS_ADDRESS": simulator.busAddress])
        }
        self.gateways = gateways
        for id in Self.gatewayIDs {
            try await observer.waitForMessage(on: "gattway/bridge/\(id)/state") { $0 == "online" }
            try await waitUntilDiscovering(Self.adapters[id]!)
        }
        for device in Self.devices {
            for adapter in hearers[device]! { try await radio.setHeard(device: device, adapter: adapter, heard: true) }
        }
    }

    static let adapters = ["gw0": "hci0", "gw1": "hci1", "gw2": "hci2"]
    static let devices = [strap, lock, thermometer]

    /// Waits until `adapter`'s `Discovering` is true (the gateway on it started its scan).
    private func waitUntilDiscovering(_ adapter: String) async throws {
        let deadline = ContinuousClock.now + .seconds(30)
        while ContinuousClock.now < deadline {
            let reply = try await radio.connection.call(
                destination: "org.bluez", path: "/org/bluez/\(adapter)", interface: "org.freedesktop.DBus.Properties",
                method: "Get", arguments: [.string("org.bluez.Adapter1"), .string("Discovering")], timeout: .seconds(10)
            )
            if reply.first?.bool == true { return }
            try await Task.sleep(for: .milliseconds(50))
        }
        throw TestWorldError("\(adapter) was not discovering within 30 s")
    }

    /// One gateway's configuration: its own adapter, gateway id and client id; keepalive 5 s, so that the broker
    /// publishes the Last Will of a killed gateway within 7.5 s.
    static func configuration(
        id: String, adapter: String, port: UInt16, protocolVersion: String, stateDirectory: String, fleet: String
    ) -> String {
        """
        mqtt:
          url: "mqtt://127.0.0.1:\(port)"
          base_topic: gattway
          client_id: gattway-\(id)
          gateway_id: \(id)
          protocol: "\(protocolVersion)"
          keepalive: 5
          metrics_interval: 1
        bluetooth:
          adapter: \(adapter)
          request_timeout: 3
          connect_timeout: 5
          reconnect: { initial: 0.2, max: 1 }
        state_dir: "\(stateDirectory)"
        fleet: { \(fleet) }
        devices:
          - name: strap
            address: "\(strap)"
            connect: always
            characteristics:
              - { name: heart_rate, service: "180D", uuid: "2A37", notify: true, codec: heart_rate_measurement }
          - name: lock
            address: "\(lock)"
            connect: on_demand
            idle_timeout: 2
            characteristics:
              - { name: control, service: "FFF0", uuid: "FFF1", write: with_response, codec: utf8 }
          - name: thermometer
            address: "\(thermometer)"
            connect: never
        """
    }

    subscript(_ id: String) -> ChildProcess { gateways[id]! }

    func publish(_ topic: String, _ payload: String) async throws {
        try await MQTTObserver.publish(
            port: broker.port(ofGateway: 0), topic: topic, payload: payload,
            extraArguments: ["-V", broker.protocolVersion])
    }

    /// Every claim published for `device`, in the order the broker delivered them.
    func claims(of device: String) -> [FleetClaim] {
        observer.messages(on: "gattway/fleet/owner/\(device)").compactMap {
            try? FleetClaim.parse(Array($0.payload.utf8))
        }
    }

    /// The gateway named in each claim published for `device`, in order (releases left out).
    func claimedOwners(of device: String) -> [String] { claims(of: device).compactMap(\.gateway) }

    /// The succession of owners of `device` as every gateway reckons it from the claims (stale ones change nothing).
    func owners(of device: String) -> [String?] { FleetClaim.owners(reckonedFrom: claims(of: device)) }

    /// Waits until the retained claim of `device` names `gateway`.
    func waitForOwner(_ gateway: String, of device: String, timeout: Duration = .seconds(30)) async throws {
        try await observer.waitForMessage(on: "gattway/fleet/owner/\(device)", timeout: timeout) {
            $0.contains("\"gateway\":\"\(gateway)\"")
        }
    }

    /// Waits for a `bridge/<gateway>/metrics` snapshot whose counter `name` is `value`.
    func waitForCounter(_ name: String, of gateway: String, toBe value: Double) async throws {
        try await observer.waitForMessage(on: "gattway/bridge/\(gateway)/metrics") { payload in
            let json = try? JSONSerialization.jsonObject(with: Data(payload.utf8)) as? [String: Any]
            return ((json?["counters"] as? [String: Any])?[name] as? NSNumber)?.doubleValue == value
        }
    }

    func stop() async {
        for gateway in gateways.values { await gateway.stop() }
        await observer.stop()
        await radio.close()
        await control.close()
        guard stopsBroker else { return }
        switch broker {
        case .mosquitto(let mosquitto): await mosquitto.stop()
        case .rabbitMQ(let cluster): await cluster.stop()
        }
        await simulator.stop()
    }

    var gattwayLog: String {
        gateways.sorted { $0.key < $1.key }.map { "--- \($0.key)\n" + String($0.value.errorOutput.suffix(3000)) }
            .joined(separator: "\n")
    }
}
