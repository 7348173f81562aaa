import DBus

extension BlueZObjectTree {
    /// Applies one event of `BlueZClient.watch()`; bluetoothd leaving the bus empties the tree.
    @discardableResult
    package mutating func apply(_ event: BlueZClient.Event) -> [Change] {
        switch event {
        case .snapshot(let objects):
            return replaceAll(with: objects)
        case .serviceLost:
            return replaceAll(with: .array(elementSignature: "{oa{sa{sv}}}", []))
        case .interfacesAdded(let path, let interfaces):
            return interfacesAdded(path: path, interfaces: interfaces)
        case .interfacesRemoved(let path, let interfaces):
            return interfacesRemoved(path: path, interfaces: interfaces)
        case .propertiesChanged(let path, let interface, let changed, let invalidated):
            return propertiesChanged(path: path, interface: interface, changed: changed, invalidated: invalidated)
        }
    }
}
