import DBus
import Foundation
import Logging
import MQTTCore
import Mosquitto
import Synchronization
import TestWorld

/// The world every relay of `compare` runs against, one relay at a time: mosquitto on a free port, the BlueZ
/// simulator with the firehose scenario (device fh0 only), and the benchmark's subscriber on `gattway/+/data`.
/// Each relay publishes fh0's values to `gattway/fh0/data`, so one subscriber tallies them all alike.
final class CompareStage: Sendable {
    static let address = BenchWorld.address(0)
    static let topic = "\(BenchWorld.base)/fh0/data"
    /// The local peripheral's source topic: what the benchmark publishes for the simulator's central to receive.
    static let peripheralTopic = "bench/tx"

    let directory: String
    let port: UInt16
    let busAddress: String
    let broker: MosquittoBroker
    let simulator: BlueZSimulatorProcess
    let control: DBusConnection
    let subscriber: BenchSubscriber
    private let subscriberTask: Task<Void, any Error>
    private let consumerTask: Task<Void, Never>

    init(paths: BenchPaths) async throws {
        directory = try makeTemporaryDirectory("gattway-bench-compare")
        broker = try await MosquittoBroker()
        port = broker.port
        simulator = try await BlueZSimulatorProcess(
            executable: paths.simulator, scenarioPath: paths.scenario, timeout: .seconds(180))
        busAddress = simulator.busAddress
        control = try await DBusConnection.connect(
            to: .address(busAddress), name: "bench-control", logger: Logger(label: "gattway.bench.control"))
        subscriber = try BenchSubscriber(port: port, base: BenchWorld.base, qos: .atMostOnce)
        let client = subscriber.client
        subscriberTask = Task { try await client.run() }
        try await subscriber.start()
        let subscriber = subscriber
        consumerTask = Task { await subscriber.consume() }
    }

    /// The simulator's counters (notifications_sent, calls.…).
    func counters() async throws -> [String: Int] {
        let dictionary = try await simulatorCall("GetCounters").first?.stringKeyedDictionary ?? [:]
        return dictionary.compactMapValues { $0.uint64.map(Int.init) }
    }

    @discardableResult
    func simulatorCall(_ method: String, _ arguments: [DBusValue] = []) async throws -> [DBusValue] {
        try await BenchWorld.call(control, method, arguments)
    }

    /// A method of the simulator's remote central (org.gattway.Simulator1.Central).
    @discardableResult
    func centralCall(_ method: String, _ arguments: [DBusValue] = []) async throws -> [DBusValue] {
        do {
            return try await control.call(
                destination: "org.gattway.Simulator1", path: "/org/gattway/simulator/central",
                interface: "org.gattway.Simulator1.Central", method: method, arguments: arguments,
                timeout: .seconds(30))
        } catch {
            throw BenchError("simulator central \(method) failed: \(error)")
        }
    }

    @discardableResult
    private func bluez(_ path: String, _ interface: String, _ method: String, _ arguments: [DBusValue] = [])
        async throws -> [DBusValue]
    {
        do {
            return try await control.call(
                destination: "org.bluez", path: path, interface: interface, method: method, arguments: arguments,
                timeout: .seconds(30))
        } catch {
            throw BenchError("\(interface).\(method) on \(path) failed: \(error)")
        }
    }

    /// BlueZ's objects: path → interface → properties.
    private func managedObjects() async throws -> [String: [String: DBusValue]] {
        let reply = try await bluez("/", "org.freedesktop.DBus.ObjectManager", "GetManagedObjects")
        var objects: [String: [String: DBusValue]] = [:]
        for (path, interfaces) in reply.first?.stringKeyedDictionary ?? [:] {
            objects[path] = interfaces.stringKeyedDictionary ?? [:]
        }
        return objects
    }

    /// Connects fh0 (discovering it first when BlueZ does not know it) and returns the object path of its
    /// notifying characteristic once services are resolved: what the C relay is given, so that it does the hot
    /// path only.
    func connectedCharacteristicPath(timeout: Duration = .seconds(60)) async throws -> String {
        let devicePath = "/org/bluez/hci0/dev_" + Self.address.replacingOccurrences(of: ":", with: "_")
        let deadline = ContinuousClock.now + timeout
        var discovering = false
        while try await managedObjects()[devicePath] == nil {
            guard ContinuousClock.now < deadline else {
                throw BenchError("\(Self.address) not discovered within \(timeout)")
            }
            if !discovering {
                try await bluez("/org/bluez/hci0", "org.bluez.Adapter1", "StartDiscovery")
                discovering = true
            }
            try await Task.sleep(for: .milliseconds(50))
        }
        if discovering { try await bluez("/org/bluez/hci0", "org.bluez.Adapter1", "StopDiscovery") }
        try await bluez(devicePath, "org.bluez.Device1", "Connect")
        while true {
            let objects = try await managedObjects()
            let resolved = objects[devicePath]?["org.bluez.Device1"]?.stringKeyedDictionary?["ServicesResolved"]?.bool
            if resolved == true {
                for (path, interfaces) in objects where path.hasPrefix(devicePath + "/") {
                    if interfaces["org.bluez.GattCharacteristic1"]?.stringKeyedDictionary?["UUID"]?.string
                        == BenchWorld.notifyUUID
                    {
                        return path
                    }
                }
                throw BenchError("\(Self.address) resolved its services but has no \(BenchWorld.notifyUUID)")
            }
            guard ContinuousClock.now < deadline else {
                throw BenchError("\(Self.address) services not resolved within \(timeout)")
            }
            try await Task.sleep(for: .milliseconds(50))
        }
    }

    /// Removes fh0 from BlueZ (disconnecting it), so a relay that finds and connects the device by itself starts
    /// from scratch: bleak's scanner only reports a device it sees appear or change while it scans.
    func forgetDevice() async throws {
        let devicePath = "/org/bluez/hci0/dev_" + Self.address.replacingOccurrences(of: ":", with: "_")
        guard try await managedObjects()[devicePath] != nil else { return }
        try await bluez("/org/bluez/hci0", "org.bluez.Adapter1", "RemoveDevice", [.objectPath(devicePath)])
    }

    /// Waits until the simulator reports fh0's characteristic subscribed (StartNotify session or acquired socket).
    func waitUntilSubscribed(_ relay: BenchProcess, timeout: Duration) async throws {
        let deadline = ContinuousClock.now + timeout
        while try await simulatorCall("IsSubscribed", [.string(Self.address), .string(BenchWorld.notifyUUID)]).first?
            .bool != true
        {
            guard relay.isRunning else { throw BenchError("\(relay.name) exited: \(relay.logTail())") }
            guard ContinuousClock.now < deadline else {
                throw BenchError("\(relay.name) did not subscribe within \(timeout): \(relay.logTail(800))")
            }
            try await Task.sleep(for: .milliseconds(50))
        }
    }

    func stop() async {
        subscriberTask.cancel()
        _ = await subscriberTask.result
        consumerTask.cancel()
        await control.close()
        await simulator.stop()
        await broker.stop()
        try? FileManager.default.removeItem(atPath: directory)
    }
}

/// One relay under test on the stage: what `BenchPhaseRunner` measures.
struct CompareRelayWorld: BenchPhaseWorld {
    let stage: CompareStage
    let relay: BenchProcess
    var devices: Int { 1 }
    var broker: MosquittoBroker { stage.broker }
    var simulator: BlueZSimulatorProcess { stage.simulator }
    var subscriber: BenchSubscriber { stage.subscriber }

    func counters() async throws -> [String: Int] { try await stage.counters() }

    func setRate(total: Double) async throws {
        try await stage.simulatorCall(
            "StartNotifying",
            [
                .string(CompareStage.address), .string(BenchWorld.notifyUUID), .double(total), .uint32(0),
                .string("seq-timestamp"),
            ])
    }
}
