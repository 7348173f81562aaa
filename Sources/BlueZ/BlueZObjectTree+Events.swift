package import BluetoothCore

extension BLEObjectTree {
    /// Applies one event of `BlueZClient.watch()`; bluetoothd leaving the bus empties the tree.
    @discardableResult
    package mutating func apply(_ event: BlueZClient.Event) -> [Change] {
        guard let decoded = BlueZDecoding.event(event) else { return [] }
        return apply(decoded)
    }
}
