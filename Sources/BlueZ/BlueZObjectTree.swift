package import BluetoothCore
package import DBus

/// BlueZ's object tree as this client knows it: `BLEObjectTree`, fed from GetManagedObjects,
/// InterfacesAdded/Removed and PropertiesChanged decoded here.
package typealias BlueZObjectTree = BLEObjectTree

extension BLEObjectTree {
    /// Replaces everything with a GetManagedObjects reply (`a{oa{sa{sv}}}`).
    package mutating func replaceAll(with managedObjects: DBusValue) -> [Change] {
        replaceAll(with: BlueZDecoding.objects(managedObjects))
    }

    /// Applies InterfacesAdded.
    package mutating func interfacesAdded(path: String, interfaces: [String: [String: DBusValue]]) -> [Change] {
        interfacesAdded(path: path, BlueZDecoding.interfaces(interfaces, path: path))
    }

    /// Applies InterfacesRemoved.
    package mutating func interfacesRemoved(path: String, interfaces: [String]) -> [Change] {
        interfacesRemoved(path: path, BlueZDecoding.kinds(interfaces))
    }

    /// Applies PropertiesChanged of one object.
    package mutating func propertiesChanged(
        path: String, interface: String, changed: [String: DBusValue], invalidated: [String]
    ) -> [Change] {
        guard
            let event = BlueZDecoding.propertiesChanged(
                path: path, interface: interface, changed: changed, invalidated: invalidated)
        else { return [] }
        return apply(event)
    }
}

/// D-Bus → `BLECentralEvent`: the one place BlueZ's property names and signatures are read.
package enum BlueZDecoding {
    package static func event(_ event: BlueZClient.Event) -> BLECentralEvent? {
        switch event {
        case .snapshot(let objects): .snapshot(Self.objects(objects))
        case .serviceLost: .serviceLost
        case .interfacesAdded(let path, let interfaces):
            .interfacesAdded(path: path, Self.interfaces(interfaces, path: path))
        case .interfacesRemoved(let path, let interfaces): .interfacesRemoved(path: path, kinds(interfaces))
        case .propertiesChanged(let path, let interface, let changed, let invalidated):
            propertiesChanged(path: path, interface: interface, changed: changed, invalidated: invalidated)
        }
    }

    static func objects(_ managedObjects: DBusValue) -> [BLEObject] {
        (managedObjects.dictionaryEntries ?? []).compactMap { entry in
            guard let path = entry.key.objectPath, let interfaces = entry.value.stringKeyedDictionary else {
                return nil
            }
            return BLEObject(
                path: path,
                interfaces: Self.interfaces(interfaces.mapValues { $0.stringKeyedDictionary ?? [:] }, path: path))
        }
    }

    static func interfaces(_ interfaces: [String: [String: DBusValue]], path: String) -> BLEInterfaces {
        var decoded = BLEInterfaces()
        if let properties = interfaces[BlueZName.adapter] { decoded.adapter = adapterProperties(properties) }
        if let properties = interfaces[BlueZName.device] {
            decoded.device = BLEDeviceState(path: path, properties: properties)
        }
        if let properties = interfaces[BlueZName.gattService] {
            decoded.serviceUUID = properties["UUID"]?.variantValue.string.flatMap { BluetoothUUID($0) }
        }
        if let properties = interfaces[BlueZName.gattCharacteristic] {
            decoded.characteristic = BLECharacteristicState(path: path, properties: properties)
        }
        return decoded
    }

    static func kinds(_ interfaces: [String]) -> Set<BLEInterfaceKind> {
        Set(
            interfaces.compactMap { interface in
                switch interface {
                case BlueZName.adapter: .adapter
                case BlueZName.device: .device
                case BlueZName.gattService: .gattService
                case BlueZName.gattCharacteristic: .gattCharacteristic
                default: nil
                }
            })
    }

    static func propertiesChanged(
        path: String, interface: String, changed: [String: DBusValue], invalidated: [String]
    ) -> BLECentralEvent? {
        switch interface {
        case BlueZName.gattCharacteristic: .characteristicChanged(path: path, BLECharacteristicState.decode(changed))
        case BlueZName.device:
            .deviceChanged(path: path, BLEDeviceState.decode(changed: changed, invalidated: invalidated))
        case BlueZName.adapter: .adapterChanged(path: path, adapterProperties(changed))
        default: nil
        }
    }

    static func adapterProperties(_ properties: [String: DBusValue]) -> [BLEAdapterProperty] {
        properties.compactMap { key, wrapped in
            let value = wrapped.variantValue
            switch key {
            case "Address": return .address(value.string)
            case "Powered": return .powered(value.bool ?? false)
            case "Discovering": return .discovering(value.bool ?? false)
            default: return nil
            }
        }
    }
}
