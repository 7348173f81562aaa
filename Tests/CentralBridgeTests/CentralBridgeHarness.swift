import BluetoothCore
import BridgeCore
import BridgeTesting
import Foundation
import Logging
import MQTTCore
import ServiceLifecycle

@testable import CentralBridge

/// A central bridge wired to an in-memory broker and a fake central, with a fresh state directory.
struct CentralBridgeHarness {
    static let strap = FakePeripheral(
        address: "C4:7C:8D:6A:3E:11", name: "Polar H10",
        services: [
            (BluetoothUUID("180D")!, [(BluetoothUUID("2A37")!, ["notify"]), (BluetoothUUID("2A39")!, ["write"])])
        ])
    static let lock = FakePeripheral(
        address: "D0:0D:10:C4:00:01", name: "Lock",
        services: [
            (BluetoothUUID("FFF0")!, [(BluetoothUUID("FFF1")!, ["write"]), (BluetoothUUID("FFF2")!, ["notify"])])
        ])

    /// The strap (`always`, a notify and a write characteristic) and the lock (`on_demand`).
    static func strapAndLock(stateDirectory: String, extra: String = "") -> String {
        """
        mqtt: { url: "mqtt://127.0.0.1", base_topic: gw, retain: true }
        bluetooth: { adapter: hci0 \(extra) }
        state_dir: \(stateDirectory)
        devices:
          - name: strap
            address: "C4:7C:8D:6A:3E:11"
            connect: always
            characteristics:
              - { name: heart_rate, service: "180D", uuid: "2A37", notify: true, codec: hex }
              - { name: control, service: "180D", uuid: "2A39", write: with_response, codec: hex }
          - name: lock
            address: "D0:0D:10:C4:00:01"
            connect: on_demand
            characteristics:
              - { name: control, service: "FFF0", uuid: "FFF1", write: with_response, codec: utf8 }
        """
    }

    let broker = InMemoryMQTTBroker()
    let central = FakeBLECentral()
    let mqtt: InMemoryMQTTClient
    /// A second client, as a user of the broker: sends commands.
    let user: InMemoryMQTTClient
    let bridge: CentralBridge
    let stateDirectory: String

    init(yaml: (String) -> String, stateDirectory: String? = nil, clock: BridgeClock = .continuous) throws {
        let directory =
            stateDirectory
            ?? FileManager.default.temporaryDirectory
            .appendingPathComponent("central-bridge-\(UUID())").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        self.stateDirectory = directory
        let configuration = try BridgeConfiguration(yaml: yaml(directory))
        mqtt = broker.makeClient(
            id: "gattway", will: MQTTMessage(topic: "gw/bridge/state", text: "offline", qos: .atLeastOnce, retain: true)
        )
        user = broker.makeClient(id: "user")
        var logger = Logger(label: "gattway.central.test")
        logger.logLevel = .critical
        bridge = CentralBridge(
            configuration: configuration, central: central, mqtt: mqtt, version: "test", clock: clock, logger: logger)
    }

    /// Runs the bridge while `body` runs, then cancels it.
    func run(_ body: () async throws -> Void) async throws {
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await bridge.run() }
            defer { group.cancelAll() }
            try await body()
        }
    }

    /// The next message on `topic` from position `since` of the broker's log.
    func next(
        on topic: String, since: Int = 0, where predicate: @escaping @Sendable (MQTTMessage) -> Bool = { _ in true }
    ) async throws -> MQTTMessage {
        try await broker.nextPublished(on: topic, since: since, where: predicate)
    }

    /// Advertises `device` until the D-Bus loop's advert path takes its report (a device is registered there once
    /// the actor has handled it), for at most 10 s. Returns whether it did.
    func advertiseUntilTaken(_ device: FakePeripheral, rssi: Int16) async throws -> Bool {
        let deadline = ContinuousClock.now + .seconds(10)
        while ContinuousClock.now < deadline {
            if central.advertise(device, rssi: rssi) { return true }
            try await Task.sleep(for: .milliseconds(10))
        }
        return false
    }

    /// Waits until the bridge has asked the central for `count` batch lengths (`paceAdverts`), for at most 10 s.
    func waitForPacingRequests(_ count: Int) async throws {
        let deadline = ContinuousClock.now + .seconds(10)
        while central.advertPacingRequests.count < count {
            guard ContinuousClock.now < deadline else {
                throw HarnessTimeout(
                    "the bridge asked for \(central.advertPacingRequests.count) of \(count) batch lengths")
            }
            try await Task.sleep(for: .milliseconds(10))
        }
    }

    /// Waits until `device` is announced online.
    func waitOnline(_ device: String, since: Int = 0) async throws {
        _ = try await next(on: "gw/\(device)/availability", since: since) { $0.payloadText == "online" }
    }

    /// Waits until the bridge subscribed to its request topics.
    func waitForRequestSubscription() async throws {
        _ = try await broker.subscriptionLog.first { $0.hasPrefix("gattway: gw/bridge/request/") }
    }

    /// Publishes as the user, once the bridge has subscribed to a filter that matches `topic` (a command sent
    /// earlier would reach nobody, as with a real broker).
    func send(_ topic: String, _ text: String) async throws {
        _ = try await broker.subscriptionLog.first { entry in
            guard entry.hasPrefix("gattway: "), let filter = try? MQTTTopicFilter(String(entry.dropFirst(9))) else {
                return false
            }
            return filter.matches(topic)
        }
        try await user.publish(MQTTMessage(topic: topic, text: text, qos: .atLeastOnce))
    }
}

/// A wait of the harness that ran out.
struct HarnessTimeout: Error, CustomStringConvertible {
    let description: String

    init(_ description: String) {
        self.description = description
    }
}
