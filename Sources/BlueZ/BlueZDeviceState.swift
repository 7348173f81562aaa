package import BluetoothCore
package import DBus

/// What BlueZ tells about one remote device (org.bluez.Device1): `BLEDeviceState`, decoded from D-Bus here.
package typealias BlueZDeviceState = BLEDeviceState

extension BLEDeviceState {
    /// Decodes an org.bluez.Device1 property set (InterfacesAdded, GetManagedObjects).
    package init(path: String, properties: [String: DBusValue]) {
        self.init(
            path: path, adapterPath: properties["Adapter"]?.variantValue.objectPath,
            properties: Self.decode(changed: properties, invalidated: []))
    }

    /// Applies a PropertiesChanged; returns whether anything an advert shows changed.
    @discardableResult
    package mutating func apply(changed: [String: DBusValue], invalidated: [String]) -> Bool {
        apply(Self.decode(changed: changed, invalidated: invalidated))
    }

    /// The properties of a PropertiesChanged (or of an initial property set); unknown ones are left out.
    static func decode(changed: [String: DBusValue], invalidated: [String]) -> [BLEDeviceProperty] {
        var properties: [BLEDeviceProperty] = []
        for (key, wrapped) in changed {
            let value = wrapped.variantValue
            switch key {
            case "Address": properties.append(.address(value.string.flatMap { BluetoothAddress($0) }))
            case "AddressType": properties.append(.addressType(value.string))
            case "Name": properties.append(.name(value.string))
            case "Alias": properties.append(.alias(value.string))
            case "RSSI": properties.append(.rssi(value.int16))
            case "TxPower": properties.append(.txPower(value.int16))
            case "Connected": properties.append(.connected(value.bool ?? false))
            case "ServicesResolved": properties.append(.servicesResolved(value.bool ?? false))
            case "Paired": properties.append(.paired(value.bool ?? false))
            case "Trusted": properties.append(.trusted(value.bool ?? false))
            case "UUIDs": properties.append(.uuids(value.stringArray ?? []))
            case "ManufacturerData":
                var decoded = AdvertisedEntries<UInt16>()
                for (id, data) in value.uint16KeyedDictionary ?? [:] { decoded[id] = data.variantValue.bytes ?? [] }
                properties.append(.manufacturerData(decoded))
            case "ServiceData":
                var decoded = AdvertisedEntries<String>()
                for (uuid, data) in value.stringKeyedDictionary ?? [:] { decoded[uuid] = data.variantValue.bytes ?? [] }
                properties.append(.serviceData(decoded))
            default: break
            }
        }
        for key in invalidated {
            switch key {
            case "RSSI": properties.append(.rssi(nil))
            case "TxPower": properties.append(.txPower(nil))
            case "Name": properties.append(.name(nil))
            case "ManufacturerData": properties.append(.manufacturerData([:]))
            case "ServiceData": properties.append(.serviceData([:]))
            default: break
            }
        }
        return properties
    }
}
