import DBus
import Foundation
import Logging
import TestWorld

/// The BlueZ simulator's control interface (org.gattway.Simulator1), called over its private bus.
struct SimulatorControl {
    let connection: DBusConnection

    static func connect(to simulator: BlueZSimulatorProcess) async throws -> SimulatorControl {
        let connection = try await DBusConnection.connect(
            to: .address(simulator.busAddress), name: "test-control", logger: Logger(label: "test.control"))
        return SimulatorControl(connection: connection)
    }

    @discardableResult
    func call(_ method: String, _ arguments: [DBusValue] = [], timeout: Duration = .seconds(30)) async throws
        -> [DBusValue]
    {
        try await connection.call(
            destination: "org.gattway.Simulator1", path: "/org/gattway/simulator", interface: "org.gattway.Simulator1",
            method: method, arguments: arguments, timeout: timeout)
    }

    /// Drops the link to `address` as if the peripheral went away (`reason`: "remote", "timeout", …).
    func disconnect(_ address: String, reason: String = "remote") async throws {
        try await call("Disconnect", [.string(address), .string(reason)])
    }

    func restartBluetoothd(downSeconds: Double) async throws {
        try await call("RestartBluetoothd", [.double(downSeconds)])
    }

    func setConnectHang(_ address: String, _ hang: Bool) async throws {
        try await call("SetConnectHang", [.string(address), .bool(hang)])
    }

    /// Whether the simulator delivered it: false when no central has subscribed to `uuid` on the link.
    @discardableResult
    func notify(_ address: String, uuid: String, _ value: [UInt8]) async throws -> Bool {
        let reply = try await call("Notify", [.string(address), .string(uuid), .bytes(value)])
        guard let delivered = reply.first?.bool else {
            throw TestWorldError("Notify of \(address) \(uuid) answered \(reply), not a boolean")
        }
        return delivered
    }

    /// Notifies `value` once the central holding the link has subscribed to `uuid`: a link comes up before the
    /// gateway's subscription does, and a notification sent in between reaches no one. Tries every 50 ms.
    func notifyOnceSubscribed(
        _ address: String, uuid: String, _ value: [UInt8], timeout: Duration = .seconds(20)
    ) async throws {
        try await withDeadline(timeout, "a subscription to \(uuid) of \(address)") { [self] in
            while try await !notify(address, uuid: uuid, value) {
                try await Task.sleep(for: .milliseconds(50))
            }
        }
    }

    /// Starts (or with `rate` 0 stops) the peripheral's own stream of notifications on `uuid`.
    func startNotifying(
        _ address: String, uuid: String, rate: Double, count: UInt32 = 0, pattern: String = "heart-rate"
    )
        async throws
    {
        try await call(
            "StartNotifying", [.string(address), .string(uuid), .double(rate), .uint32(count), .string(pattern)])
    }

    /// Whether the simulated bluetoothd holds a link to `address` now: its own Device1.Connected.
    func isConnected(_ address: String, adapter: String = "hci0") async throws -> Bool {
        let path = "/org/bluez/\(adapter)/dev_" + address.replacingOccurrences(of: ":", with: "_")
        let reply = try await connection.call(
            destination: "org.bluez", path: path, interface: "org.freedesktop.DBus.Properties", method: "Get",
            arguments: [.string("org.bluez.Device1"), .string("Connected")], timeout: .seconds(30))
        guard let connected = reply.first?.bool else {
            throw TestWorldError("Device1.Connected of \(address) is not a boolean: \(reply)")
        }
        return connected
    }

    /// The values written to a characteristic so far.
    func writes(_ address: String, uuid: String) async throws -> [[UInt8]] {
        let reply = try await call("GetWrites", [.string(address), .string(uuid)])
        return Self.byteArrays(in: reply.first)
    }

    func counters() async throws -> [String: DBusValue] {
        try await call("GetCounters").first?.stringKeyedDictionary ?? [:]
    }

    /// One of the simulator's counters (0 while nothing was counted).
    func counter(_ name: String) async throws -> UInt64 {
        try await counters()[name]?.uint64 ?? 0
    }

    /// Waits until counter `name` reaches `target`.
    func waitForCounter(_ name: String, atLeast target: UInt64, timeout: Duration = .seconds(30)) async throws {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if try await counter(name) >= target { return }
            try await Task.sleep(for: .milliseconds(50))
        }
        throw TestWorldError("simulator counter \(name) stayed below \(target) for \(timeout)")
    }

    func close() async { await connection.close() }

    /// Collects every `ay` found in a reply (arrays of structs or of byte arrays).
    static func byteArrays(in value: DBusValue?) -> [[UInt8]] {
        guard let value else { return [] }
        if let bytes = value.bytes { return [bytes] }
        if let fields = value.structureFields { return fields.compactMap(\.bytes).prefix(1).map { $0 } }
        if let elements = value.arrayElements { return elements.flatMap { byteArrays(in: $0) } }
        if case .variant(let inner) = value { return byteArrays(in: inner) }
        return []
    }
}
