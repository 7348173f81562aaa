import BluetoothCore

/// What the health report says of an adapter and its devices.
package struct AdapterHealth: Sendable, Equatable {
    package var powered: Bool
    package var devicesKnown: Int
    package var devicesConnected: Int
}

extension CentralBridge {
    /// The configured adapter as the bridge's object tree has it, or nil while the bridge has no picture of BlueZ
    /// (bluetoothd absent, or its objects not read yet).
    ///
    /// Why from here: the tree is kept current by BlueZ's signals, so the health check needs no GetManagedObjects.
    /// With a thousand devices around, that reply is the largest message bluetoothd sends, and a check every 2 s
    /// would cost both processes more than a hundred advertisements do.
    package func adapterHealth() -> AdapterHealth? {
        guard bluetoothdPresent else { return nil }
        var known = 0
        var connected = 0
        for device in tree.devices.values where device.adapterPath == adapterPath {
            known += 1
            if device.connected { connected += 1 }
        }
        return AdapterHealth(
            powered: tree.adapters[adapterPath]?.powered ?? false, devicesKnown: known, devicesConnected: connected)
    }
}
