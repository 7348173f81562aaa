/// What happens to the objects a central knows (adapters, devices, GATT services and characteristics), in order.
/// `BLEObjectTree.apply(_:)` turns each into the changes a bridge acts on.
package enum BLECentralEvent: Sendable, Hashable {
    /// The stack is (again) present: every object it has.
    case snapshot([BLEObject])
    /// The stack went away: every object is gone.
    case serviceLost
    case interfacesAdded(path: String, BLEInterfaces)
    case interfacesRemoved(path: String, Set<BLEInterfaceKind>)
    case adapterChanged(path: String, [BLEAdapterProperty])
    case deviceChanged(path: String, [BLEDeviceProperty])
    case characteristicChanged(path: String, [BLECharacteristicProperty])
}

/// The kinds of object a central reports.
package enum BLEInterfaceKind: Sendable, Hashable {
    case adapter, device, gattService, gattCharacteristic
}

/// One object and what it is.
package struct BLEObject: Sendable, Hashable {
    package var path: String
    package var interfaces: BLEInterfaces

    package init(path: String, interfaces: BLEInterfaces) {
        self.path = path
        self.interfaces = interfaces
    }
}

/// The interfaces an object has, each with its initial properties (nil: the object is not of that kind).
package struct BLEInterfaces: Sendable, Hashable {
    package var adapter: [BLEAdapterProperty]?
    package var device: BLEDeviceState?
    /// A GATT service and its UUID.
    package var serviceUUID: BluetoothUUID?
    package var characteristic: BLECharacteristicState?

    package init(
        adapter: [BLEAdapterProperty]? = nil, device: BLEDeviceState? = nil, serviceUUID: BluetoothUUID? = nil,
        characteristic: BLECharacteristicState? = nil
    ) {
        self.adapter = adapter
        self.device = device
        self.serviceUUID = serviceUUID
        self.characteristic = characteristic
    }
}
