package import BluetoothCore
package import DBus

extension BlueZClient {
    /// Advertised data a device's PropertiesChanged may carry before it is declined as hostile: more entries or
    /// bytes than any advertisement (extended ones hold 1,650 bytes) are left to the general path, which bounds the
    /// tree instead.
    static let maxAdvertEntries = 32
    static let maxAdvertBytes = 1_650
    static let maxServiceUUIDLength = 64

    /// Hands each advertisement report that bluetoothd makes of a device (a `Device1` PropertiesChanged carrying
    /// only RSSI, TxPower, ManufacturerData and ServiceData) to `handler`, on the D-Bus connection's loop as the
    /// signal is dispatched. When `handler` returns true the report is taken and `watch()` does not see it; when
    /// it returns false (or the signal carries anything else) the signal goes on to `watch()` as usual.
    ///
    /// The passive advertisement hot path: the signal is read in place (`visitChangedProperties`), not decoded into
    /// `DBusValue`s, and no task or actor hand-off happens per advertisement. `handler` must be quick.
    package func tapDeviceAdverts(
        _ handler: @escaping @Sendable (_ devicePath: String, _ properties: [BLEDeviceProperty]) -> Bool
    ) async throws -> DBusSignalTapToken {
        let rule = DBusMatchRule(
            sender: BlueZName.service, interface: BlueZName.properties, member: "PropertiesChanged",
            arg0: BlueZName.device)
        return try await connection.tapMessages(matching: rule) { message in
            guard let properties = Self.advertProperties(of: message) else { return false }
            return handler(message.path, properties)
        }
    }

    /// The advert properties of `PropertiesChanged(Device1, {…}, [])`, or nil when it carries any other property,
    /// a value of an unexpected type or size, or invalidates one.
    package static func advertProperties(of message: DBusSignalMessage) -> [BLEDeviceProperty]? {
        var properties: [BLEDeviceProperty] = []
        properties.reserveCapacity(3)
        let complete = message.visitChangedProperties(ofInterface: BlueZName.device) { name, value in
            if name.is("RSSI") {
                guard let rssi = value.int16() else { return false }
                properties.append(.rssi(rssi))
            } else if name.is("ServiceData") {
                guard
                    let data = value.stringKeyedByteArrays(
                        maxEntries: maxAdvertEntries, maxBytes: maxAdvertBytes, maxKeyLength: maxServiceUUIDLength)
                else { return false }
                properties.append(.serviceData(data))
            } else if name.is("ManufacturerData") {
                guard let data = value.uint16KeyedByteArrays(maxEntries: maxAdvertEntries, maxBytes: maxAdvertBytes)
                else { return false }
                properties.append(.manufacturerData(data))
            } else if name.is("TxPower") {
                guard let power = value.int16() else { return false }
                properties.append(.txPower(power))
            } else {
                return false
            }
            return true
        }
        return complete && !properties.isEmpty ? properties : nil
    }
}
