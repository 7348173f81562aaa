package import BluetoothCore
package import DBus

/// How a characteristic write is carried out (GattCharacteristic1.WriteValue's `type` option).
package enum BlueZWriteType: String, Sendable, Hashable {
    /// Write Request: the peripheral answers, errors come back.
    case request
    /// Write Command: no answer from the peripheral.
    case command
    case reliable
}

/// The discovery filter the client asks BlueZ for (Adapter1.SetDiscoveryFilter). BlueZ merges every client's
/// filter, so what arrives must still be filtered locally.
package typealias BlueZDiscoveryFilter = BLEDiscoveryFilter

extension BLEDiscoveryFilter {
    var dbusValue: DBusValue {
        var entries: [String: DBusValue] = [
            "Transport": .string(transport),
            "DuplicateData": .bool(duplicateData),
        ]
        if !uuids.isEmpty { entries["UUIDs"] = .stringArray(uuids) }
        if let rssi { entries["RSSI"] = .int16(rssi) }
        if let pathloss { entries["Pathloss"] = .uint16(pathloss) }
        if let pattern { entries["Pattern"] = .string(pattern) }
        return .stringVariantDictionary(entries)
    }
}

extension BlueZClient {
    package func setPowered(adapter: String, _ powered: Bool) async throws {
        _ = try await connection.call(
            destination: BlueZName.service, path: adapter, interface: BlueZName.properties, method: "Set",
            arguments: [.string(BlueZName.adapter), .string("Powered"), .bool(powered)],
            timeout: .seconds(10))
    }

    package func setDiscoveryFilter(adapter: String, _ filter: BlueZDiscoveryFilter) async throws {
        try await callBlueZ(adapter, BlueZName.adapter, "SetDiscoveryFilter", [filter.dbusValue], .seconds(10))
    }

    package func startDiscovery(adapter: String) async throws {
        try await callBlueZ(adapter, BlueZName.adapter, "StartDiscovery", [], .seconds(10))
    }

    package func stopDiscovery(adapter: String) async throws {
        try await callBlueZ(adapter, BlueZName.adapter, "StopDiscovery", [], .seconds(10))
    }

    package func removeDevice(adapter: String, device: String) async throws {
        try await callBlueZ(adapter, BlueZName.adapter, "RemoveDevice", [.objectPath(device)], .seconds(30))
    }

    /// Device1.Connect: replies when the link is up; GATT objects and `ServicesResolved` follow.
    package func connect(device: String, timeout: Duration) async throws {
        try await callBlueZ(device, BlueZName.device, "Connect", [], timeout)
    }

    package func disconnect(device: String, timeout: Duration = .seconds(10)) async throws {
        try await callBlueZ(device, BlueZName.device, "Disconnect", [], timeout)
    }

    package func readValue(characteristic: String, offset: UInt16 = 0, timeout: Duration) async throws -> [UInt8] {
        var options: [String: DBusValue] = [:]
        if offset != 0 { options["offset"] = .uint16(offset) }
        let reply = try await connection.call(
            destination: BlueZName.service, path: characteristic, interface: BlueZName.gattCharacteristic,
            method: "ReadValue", arguments: [.stringVariantDictionary(options)], timeout: timeout)
        return reply.first?.bytes ?? []
    }

    package func writeValue(
        characteristic: String, _ value: [UInt8], type: BlueZWriteType, timeout: Duration
    ) async throws {
        let options: [String: DBusValue] = ["type": .string(type.rawValue)]
        try await callBlueZ(
            characteristic, BlueZName.gattCharacteristic, "WriteValue",
            [.bytes(value), .stringVariantDictionary(options)], timeout)
    }

    package func startNotify(characteristic: String, timeout: Duration = .seconds(10)) async throws {
        try await callBlueZ(characteristic, BlueZName.gattCharacteristic, "StartNotify", [], timeout)
    }

    package func stopNotify(characteristic: String, timeout: Duration = .seconds(10)) async throws {
        try await callBlueZ(characteristic, BlueZName.gattCharacteristic, "StopNotify", [], timeout)
    }

    /// GattCharacteristic1.AcquireNotify: a SEQPACKET socket carrying one datagram per notification, and the ATT MTU.
    package func acquireNotify(characteristic: String, timeout: Duration = .seconds(10)) async throws
        -> (socket: DBusFileDescriptor, mtu: UInt16)
    {
        let reply = try await connection.call(
            destination: BlueZName.service, path: characteristic, interface: BlueZName.gattCharacteristic,
            method: "AcquireNotify", arguments: [.stringVariantDictionary([:])], timeout: timeout)
        guard reply.count == 2, let fd = reply[0].fileDescriptor, let mtu = reply[1].uint16 else {
            throw DBusError(name: DBusError.failed, message: "AcquireNotify replied with an unexpected signature")
        }
        return (fd, mtu)
    }

    private func callBlueZ(
        _ path: String, _ interface: String, _ method: String, _ arguments: [DBusValue], _ timeout: Duration
    ) async throws {
        _ = try await connection.call(
            destination: BlueZName.service, path: path, interface: interface, method: method, arguments: arguments,
            timeout: timeout)
    }
}
