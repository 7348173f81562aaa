import DBus
import Foundation
import TestWorld

/// What the simulated bluetoothd itself says about its devices, read over the private bus as any D-Bus client
/// would, and the advertising controls the advert tests drive.
extension SimulatorControl {
    /// BlueZ's object path for `address` on hci0 (`/org/bluez/hci0/dev_C4_7C_…`).
    static func devicePath(_ address: String) -> String {
        "/org/bluez/hci0/dev_" + address.replacingOccurrences(of: ":", with: "_")
    }

    /// `org.bluez.Device1.Connected` of `address`, or nil when BlueZ has no such device object.
    func isConnected(_ address: String) async throws -> Bool? {
        do {
            let reply = try await connection.call(
                destination: "org.bluez", path: Self.devicePath(address), interface: "org.freedesktop.DBus.Properties",
                method: "Get", arguments: [.string("org.bluez.Device1"), .string("Connected")], timeout: .seconds(10))
            return reply.first?.variantValue.bool
        } catch let error as DBusError
            where error.name == "org.freedesktop.DBus.Error.UnknownObject"
            || error.name == "org.freedesktop.DBus.Error.UnknownMethod"
            || error.name == "org.freedesktop.DBus.Error.InvalidArgs"
        {
            return nil
        }
    }

    /// Each write to a characteristic so far with its ATT procedure: "request" (with response) or "command".
    func writeProcedures(_ address: String, uuid: String) async throws -> [(value: [UInt8], procedure: String)] {
        let reply = try await call("GetWrites", [.string(address), .string(uuid)])
        return (reply.first?.arrayElements ?? []).compactMap { entry in
            guard let fields = entry.structureFields, fields.count == 3, let value = fields[0].bytes,
                let procedure = fields[2].string
            else { return nil }
            return (value, procedure)
        }
    }

    /// The RSSI the peripheral advertises with from now on (its random walk stops).
    func setRSSI(_ address: String, _ rssi: Int16) async throws {
        try await call("SetRSSI", [.string(address), .int16(rssi)])
    }
}

extension SimulatorControl {
    /// `org.bluez.Device1.RSSI` of `address`: what bluetoothd last heard, or nil when it has no such value.
    func heardRSSI(_ address: String) async throws -> Int16? {
        let reply = try await connection.call(
            destination: "org.bluez", path: Self.devicePath(address), interface: "org.freedesktop.DBus.Properties",
            method: "Get", arguments: [.string("org.bluez.Device1"), .string("RSSI")], timeout: .seconds(10))
        return reply.first?.variantValue.int16
    }

    /// Sets the advertised RSSI and waits until bluetoothd has heard an advert with it.
    func advertise(_ address: String, rssi: Int16, timeout: Duration = .seconds(20)) async throws {
        try await setRSSI(address, rssi)
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if try await heardRSSI(address) == rssi { return }
            try await Task.sleep(for: .milliseconds(20))
        }
        throw TestWorldError("bluetoothd did not hear \(address) at RSSI \(rssi) within \(timeout)")
    }
}

extension SimulatorControl {
    /// Changes what the peripheral advertises (`{"uuids": […]}`, `{"name": …}`, …) from its next advert on.
    func updateAdvert(_ address: String, _ patchJSON: String) async throws {
        try await call("UpdateAdvert", [.string(address), .string(patchJSON)])
    }

    /// `org.bluez.Device1.UUIDs` of `address`: the service UUIDs bluetoothd last heard advertised.
    func heardUUIDs(_ address: String) async throws -> [String] {
        let reply = try await connection.call(
            destination: "org.bluez", path: Self.devicePath(address), interface: "org.freedesktop.DBus.Properties",
            method: "Get", arguments: [.string("org.bluez.Device1"), .string("UUIDs")], timeout: .seconds(10))
        return reply.first?.variantValue.stringArray ?? []
    }
}
