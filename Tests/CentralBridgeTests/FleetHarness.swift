import BluetoothCore
import BridgeCore
import BridgeTesting
import Foundation
import Logging
import MQTTCore

@testable import CentralBridge

/// Several central bridges, each with its own fake central and broker client (and Last Will), on one in-memory
/// broker and one manual clock: a fleet of gateways hearing the same strap.
struct FleetHarness {
    struct Gateway {
        let id: String
        let central: FakeBLECentral
        let mqtt: InMemoryMQTTClient
        let bridge: CentralBridge
    }

    static let strap = CentralBridgeHarness.strap
    /// A passive tag (`connect: never`): heard, never connected.
    static let tag = FakePeripheral(address: "E2:00:00:00:7A:01", name: "Tag", services: [])

    let broker = InMemoryMQTTBroker()
    let clock = ManualClock()
    let user: InMemoryMQTTClient
    let gateways: [Gateway]

    /// `fleet` is the body of every gateway's `fleet:` section.
    init(gatewayIDs: [String] = ["a", "b", "c"], fleet: String = "") throws {
        user = broker.makeClient(id: "user")
        var gateways: [Gateway] = []
        for id in gatewayIDs {
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("fleet-\(id)-\(UUID())").path
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            let configuration = try BridgeConfiguration(
                yaml: """
                    mqtt: { url: "mqtt://127.0.0.1", base_topic: gw, gateway_id: \(id), retain: true }
                    bluetooth: { adapter: hci0 }
                    state_dir: \(directory)
                    fleet: { \(fleet) }
                    devices:
                      - name: strap
                        address: "C4:7C:8D:6A:3E:11"
                        connect: always
                        characteristics:
                          - { name: heart_rate, service: "180D", uuid: "2A37", notify: true, codec: hex }
                          - { name: control, service: "180D", uuid: "2A39", write: with_response, codec: hex }
                      - name: tag
                        address: "E2:00:00:00:7A:01"
                        connect: never
                    """)
            let mqtt = broker.makeClient(
                id: id,
                will: MQTTMessage(topic: "gw/bridge/\(id)/state", text: "offline", qos: .atLeastOnce, retain: true))
            var logger = Logger(label: "gattway.fleet.test.\(id)")
            logger.logLevel = .critical
            let central = FakeBLECentral()
            let bridge = CentralBridge(
                configuration: configuration, central: central, mqtt: mqtt, version: "test",
                clock: BridgeClock(clock), logger: logger)
            gateways.append(Gateway(id: id, central: central, mqtt: mqtt, bridge: bridge))
        }
        self.gateways = gateways
    }

    subscript(_ id: String) -> Gateway { gateways.first { $0.id == id }! }

    /// Runs every gateway while `body` runs, then cancels them.
    func run(_ body: () async throws -> Void) async throws {
        try await withThrowingTaskGroup(of: Void.self) { group in
            for gateway in gateways { group.addTask { try await gateway.bridge.run() } }
            defer { group.cancelAll() }
            try await body()
        }
    }

    /// Each gateway hears the strap at its own signal (dBm), as a new device or a changed RSSI.
    func hear(_ signals: [String: Int16]) {
        for (id, rssi) in signals { self[id].central.advertise(Self.strap, rssi: rssi) }
    }

    /// Moves the manual clock one fleet tick at a time until `condition` holds, after each step waiting until
    /// every running gateway has handled that tick (so that simulated time never runs ahead of the gateways).
    /// - Throws: when `condition` does not hold within `limit` of simulated time.
    func advance(
        upTo limit: Duration = .seconds(60), running: [String]? = nil, until condition: () -> Bool = { false }
    ) async throws {
        let ticking = gateways.filter { running?.contains($0.id) ?? true }
        var elapsed = Duration.zero
        while !condition() {
            guard elapsed < limit else { throw StepLimit(limit: limit) }
            let before = ticking.map { $0.bridge.fleetTickCount }
            clock.advance(by: CentralBridge.fleetTickInterval)
            elapsed += CentralBridge.fleetTickInterval
            for (gateway, count) in zip(ticking, before) {
                try await waitUntil { gateway.bridge.fleetTickCount > count }
            }
            try await settle(ticking)
        }
    }

    /// Waits until what a tick set moving has come to rest: every gateway's client has taken in what it was handed
    /// (`InMemoryMQTTClient.isIdle`), and neither the broker's log nor any central's operations grew across two looks
    /// a pause apart. Without it a loaded machine lets the clock run ahead of a claim and its echo, whose timeouts
    /// count in simulated time, and a takeover the test waits for never comes.
    private func settle(_ ticking: [Gateway]) async throws {
        let deadline = ContinuousClock.now + .seconds(30)
        var previous: [Int]?
        while true {
            var idle = true
            for gateway in ticking where !(await gateway.mqtt.isIdle()) { idle = false }
            let snapshot = [broker.publicationCount] + gateways.map { $0.central.operations.count }
            if idle, snapshot == previous { return }
            previous = idle ? snapshot : nil
            guard ContinuousClock.now < deadline else { throw RealTimeLimit(waitingFor: "the fleet to come to rest") }
            try await Task.sleep(for: .milliseconds(2))
        }
    }

    /// Moves the manual clock by `duration`, tick by tick, as `advance` does.
    func pass(_ duration: Duration) async throws {
        var passed = Duration.zero
        try await advance(upTo: duration + .seconds(1)) {
            defer { passed += CentralBridge.fleetTickInterval }
            return passed >= duration
        }
    }

    /// Every gateway's fleet clock has started (it ticks once at once, and then on a grid from the time it
    /// started): call before the first `advance`.
    func waitForTickLoops() async throws {
        for gateway in gateways { try await waitUntil { gateway.bridge.fleetTickCount >= 1 } }
    }

    /// Connects each gateway's central was asked for, of the strap.
    func connects(of id: String) -> Int {
        self[id].central.operations.entries.filter { $0 == .connect(Self.strap.path) }.count
    }

    /// Values of the strap's heart rate published, by the client id that published them.
    func heartRatePublishers() -> [String] {
        broker.publications.filter { $0.message.topic == "gw/strap/heart_rate" }.map(\.clientID)
    }

    struct StepLimit: Error, CustomStringConvertible {
        let limit: Duration
        var description: String { "the condition did not hold within \(limit) of simulated time" }
    }

    struct RealTimeLimit: Error, CustomStringConvertible {
        let waitingFor: String
        var description: String { "waited 30 s (real time) for \(waitingFor)" }
    }
}

/// Waits (in real time, at most 30 s) until `condition` holds, yielding between checks.
func waitUntil(_ condition: () -> Bool) async throws {
    let deadline = ContinuousClock.now + .seconds(30)
    while !condition() {
        guard ContinuousClock.now < deadline else { throw FleetHarness.RealTimeLimit(waitingFor: "a condition") }
        try await Task.sleep(for: .milliseconds(1))
    }
}
