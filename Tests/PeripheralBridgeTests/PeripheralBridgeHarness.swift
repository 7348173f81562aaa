import BluetoothCore
import BridgeCore
import BridgeTesting
import Foundation
import Logging
import MQTTCore

@testable import PeripheralBridge

/// A local peripheral wired to an in-memory broker, a fake GATT server and a manual clock, with a fresh state
/// directory. Characteristics by id: 0 `a` (notify, source test/a, 4 deep, backpressure), 1 `b` (notify,
/// source test/b), 2 `c` (indicate, source test/c), 3 `rx` (write, sink test/rx).
struct PeripheralBridgeHarness {
    static let a = 0, b = 1, c = 2, rx = 3
    static let phone = "/org/bluez/hci0/dev_11_22_33_44_55_66"
    static let tablet = "/org/bluez/hci0/dev_AA_BB_CC_DD_EE_FF"

    static func yaml(stateDirectory: String, whenFull: String, maxConnections: Int) -> String {
        """
        mqtt: { url: "mqtt://127.0.0.1", base_topic: gw }
        state_dir: \(stateDirectory)
        bluetooth: { adapter: hci0 }
        peripheral:
          adapter: hci0
          max_connections: \(maxConnections)
          stall_limit: 5
          advertise: { local_name: gw-test }
          services:
            - uuid: "6e400001-b5a3-f393-e0a9-e50e24dcca9e"
              characteristics:
                - uuid: "6e400003-b5a3-f393-e0a9-e50e24dcca9e"
                  name: a
                  flags: [read, notify]
                  source_topic: test/a
                  codec: utf8
                  queue: { depth: 4, when_full: \(whenFull) }
                - { uuid: "6e400004-b5a3-f393-e0a9-e50e24dcca9e", name: b, flags: [read, notify], source_topic: test/b, codec: utf8 }
                - { uuid: "6e400005-b5a3-f393-e0a9-e50e24dcca9e", name: c, flags: [indicate], source_topic: test/c, codec: utf8 }
                - { uuid: "6e400002-b5a3-f393-e0a9-e50e24dcca9e", name: rx, flags: [write], sink_topic: test/rx, codec: hex, max_length: 64 }
        """
    }

    let broker = InMemoryMQTTBroker()
    let server: FakeGATTServer
    let clock = ManualClock()
    let mqtt: InMemoryMQTTClient
    /// A second client, as a user of the broker: publishes source values.
    let user: InMemoryMQTTClient
    let bridge: PeripheralBridge

    /// `fastPath`: the fake stack emits on the MQTT client's loop, as the daemon's bus does, so source values take
    /// the synchronous way where they can; otherwise every value goes through the bridge's consumer.
    init(whenFull: String = "backpressure", maxConnections: Int = 4, fastPath: Bool = false) throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("peripheral-bridge-\(UUID())")
            .path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let configuration = try BridgeConfiguration(
            yaml: Self.yaml(stateDirectory: directory, whenFull: whenFull, maxConnections: maxConnections))
        mqtt = broker.makeClient(id: "gattway-peripheral")
        user = broker.makeClient(id: "user")
        server = FakeGATTServer(emitLoop: fastPath ? mqtt.publishLoop : nil)
        var logger = Logger(label: "gattway.peripheral.test")
        logger.logLevel = .critical
        bridge = PeripheralBridge(
            configuration: configuration, server: server, mqtt: mqtt, logger: logger, clock: BridgeClock(clock))
    }

    /// Runs the bridge while `body` runs (once its application is registered), then cancels it.
    func run(_ body: () async throws -> Void) async throws {
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await bridge.run() }
            defer { group.cancelAll() }
            try await server.wait(for: "application registered") { $0.isApplicationRegistered }
            _ = try await broker.subscriptionLog.first { $0 == "gattway-peripheral: test/c" }
            try await body()
        }
    }

    func publish(_ topic: String, _ text: String) async throws {
        try await user.publish(MQTTMessage(topic: topic, text: text, qos: .atLeastOnce))
    }

    func handler() throws -> any GATTServerHandler { try server.handler }

    /// The characteristic's entry in the latest `gw/peripheral/status` once `predicate` holds for it.
    func status(
        of characteristic: String, where predicate: @escaping @Sendable ([String: Any]) -> Bool
    ) async throws -> [String: Any] {
        let message = try await broker.nextPublished(on: "gw/peripheral/status") { message in
            Self.entry(characteristic, in: message).map(predicate) ?? false
        }
        return Self.entry(characteristic, in: message) ?? [:]
    }

    static func entry(_ characteristic: String, in message: MQTTMessage) -> [String: Any]? {
        let json = try? JSONSerialization.jsonObject(with: Data(message.payload)) as? [String: Any]
        return (json?["characteristics"] as? [String: Any])?[characteristic] as? [String: Any]
    }
}

extension FakeNotificationLink {
    /// Waits until the central has been sent (pending or taken) at least `count` values.
    func waitForValues(_ count: Int) async throws {
        try await wait(for: "\(count) values") { $0.pending.count + $0.delivered.count >= count }
    }

    var texts: [String] { (delivered + pending).map { String(decoding: $0, as: UTF8.self) } }
}

extension PeripheralBridgeHarness {
    /// Waits (at most 30 s of real time) until the characteristic's subscribers have counted `count` notifications
    /// sent: then no value is in flight any more.
    func waitForNotifications(_ count: Int, of characteristic: Int) async throws {
        let deadline = ContinuousClock.now + .seconds(30)
        while await bridge.channels[characteristic].snapshot.notifications < count {
            guard ContinuousClock.now < deadline else { throw ConditionTimeout(what: "\(count) notifications") }
            try await Task.sleep(for: .milliseconds(2))
        }
    }
}
