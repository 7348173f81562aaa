extension BluetoothUUID {
    /// Generic Access (GAP) service.
    package static let gapService = BluetoothUUID(uuid16: 0x1800)
    /// GAP Device Name characteristic: the name a device gives itself.
    package static let gapDeviceName = BluetoothUUID(uuid16: 0x2A00)
}
