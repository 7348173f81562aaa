package import DBus
import Foundation
import Logging

/// The simulator's air as a fleet test moves it: which adapter hears which peripheral and how strongly, and which
/// adapter holds a peripheral's one link. Driven through the simulator's control interface (org.gattway.Simulator1)
/// and read back from the simulated bluetoothd's own Device1 objects, over the simulator's private bus.
///
/// Adapters are named as gateways name them (`hci1`); a device is its address (`D0:0D:10:C4:00:01`).
package struct SimulatorRadio: Sendable {
    package let connection: DBusConnection

    /// Connects to the private bus of `simulator`.
    package static func connect(to simulator: BlueZSimulatorProcess) async throws -> SimulatorRadio {
        let connection = try await DBusConnection.connect(
            to: .address(simulator.busAddress), name: "test-radio", logger: Logger(label: "test.radio"))
        return SimulatorRadio(connection: connection)
    }

    package func close() async { await connection.close() }

    /// The signal `adapter` hears `device` with from its next advertisement on (its random walk stops).
    package func setRSSI(device: String, adapter: String, rssi: Int16) async throws {
        try await control("SetRSSI", [.string("\(adapter)/\(device)"), .int16(rssi)])
    }

    /// The signal every adapter that hears `device` will receive its next advertisement with.
    package func signals(device: String) async throws -> [String: Int16] {
        let reply = try await control("GetSignals", [.string(device)])
        guard let entries = reply.first?.stringKeyedDictionary else {
            throw TestWorldError("GetSignals(\(device)) answered \(reply), not a{sn}")
        }
        return try entries.mapValues { value in
            guard let rssi = value.int16 else { throw TestWorldError("GetSignals(\(device)): \(value) is not an RSSI") }
            return rssi
        }
    }

    /// Takes `device` out of `adapter`'s range (`heard` false: no more reports there, a link from there drops as a
    /// supervision timeout) or brings it back.
    package func setHeard(device: String, adapter: String, heard: Bool) async throws {
        try await control("SetHeard", [.string(device), .string(adapter), .bool(heard)])
    }

    /// The adapter connected to `device` now, or nil when it has no link.
    package func linkAdapter(device: String) async throws -> String? {
        let reply = try await control("GetLinkAdapter", [.string(device)])
        guard let adapter = reply.first?.string else {
            throw TestWorldError("GetLinkAdapter(\(device)) answered \(reply), not a string")
        }
        return adapter.isEmpty ? nil : adapter
    }

    /// Drops `adapter`'s link to `device` (`reason`: "timeout", "remote", "local", …), as when the gateway's host
    /// goes away while bluetoothd there held the link.
    package func disconnect(device: String, adapter: String, reason: String = "timeout") async throws {
        try await control("Disconnect", [.string("\(adapter)/\(device)"), .string(reason)])
    }

    /// Powers `adapter` off (its links drop, its discovery stops) or on, as when the host of its gateway goes away.
    package func setPowered(adapter: String, on: Bool) async throws {
        try await control("SetPowered", [.string(adapter), .bool(on)])
    }

    /// Starts discovery on each of `adapters` for this connection (a session of its own, as a gateway has), so that
    /// their Device1 objects show what each hears.
    package func startDiscovery(adapters: [String]) async throws {
        for adapter in adapters {
            _ = try await connection.call(
                destination: "org.bluez", path: "/org/bluez/\(adapter)", interface: "org.bluez.Adapter1",
                method: "StartDiscovery", arguments: [], timeout: .seconds(10))
        }
    }

    /// `org.bluez.Device1.RSSI` of `device` on `adapter`: what that adapter's bluetoothd last signalled, or nil while
    /// it has no value (no device object yet, or discovery stopped).
    package func heardRSSI(device: String, adapter: String) async throws -> Int16? {
        do {
            let reply = try await connection.call(
                destination: "org.bluez", path: Self.devicePath(device, adapter: adapter),
                interface: "org.freedesktop.DBus.Properties", method: "Get",
                arguments: [.string("org.bluez.Device1"), .string("RSSI")], timeout: .seconds(10))
            return reply.first?.int16
        } catch let error as DBusError where Self.absent.contains(error.name) {
            return nil
        }
    }

    /// Waits until `adapter`'s Device1 object for `device` shows `rssi` (bluetoothd signals a change of 8 dBm or
    /// more, or every report while a discovery filter is set).
    package func waitForHeardRSSI(device: String, adapter: String, rssi: Int16, timeout: Duration = .seconds(20))
        async throws
    {
        let deadline = ContinuousClock.now + timeout
        var last: Int16?
        while ContinuousClock.now < deadline {
            last = try await heardRSSI(device: device, adapter: adapter)
            if last == rssi { return }
            try await Task.sleep(for: .milliseconds(20))
        }
        throw TestWorldError(
            "\(adapter) did not show \(device) at RSSI \(rssi) within \(timeout) (last: \(String(describing: last)))")
    }

    /// `org.bluez.Device1.Connected` of `device` on `adapter` (false while that adapter has no device object).
    package func isConnected(device: String, adapter: String) async throws -> Bool {
        do {
            let reply = try await connection.call(
                destination: "org.bluez", path: Self.devicePath(device, adapter: adapter),
                interface: "org.freedesktop.DBus.Properties", method: "Get",
                arguments: [.string("org.bluez.Device1"), .string("Connected")], timeout: .seconds(10))
            guard let connected = reply.first?.bool else {
                throw TestWorldError("Device1.Connected of \(device) on \(adapter) is not a boolean: \(reply)")
            }
            return connected
        } catch let error as DBusError where Self.absent.contains(error.name) {
            return false
        }
    }

    /// BlueZ's object path for `device` on `adapter` (`/org/bluez/hci1/dev_D0_0D_…`).
    package static func devicePath(_ device: String, adapter: String) -> String {
        "/org/bluez/\(adapter)/dev_" + device.uppercased().replacingOccurrences(of: ":", with: "_")
    }

    /// What bluetoothd answers for a device object it does not have (yet), or a property it does not show.
    private static let absent: Set<String> = [
        "org.freedesktop.DBus.Error.UnknownObject", "org.freedesktop.DBus.Error.UnknownMethod",
        "org.freedesktop.DBus.Error.InvalidArgs",
    ]

    @discardableResult
    private func control(_ method: String, _ arguments: [DBusValue]) async throws -> [DBusValue] {
        try await connection.call(
            destination: "org.gattway.Simulator1", path: "/org/gattway/simulator", interface: "org.gattway.Simulator1",
            method: method, arguments: arguments, timeout: .seconds(30))
    }
}
