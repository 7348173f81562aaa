package import BluetoothCore
package import DBus

/// A remote GATT characteristic as BlueZ exports it (org.bluez.GattCharacteristic1), decoded from D-Bus here.
package typealias BlueZCharacteristicState = BLECharacteristicState

extension BLECharacteristicState {
    package init(path: String, properties: [String: DBusValue]) {
        self.init(
            path: path, uuid: properties["UUID"]?.variantValue.string.flatMap { BluetoothUUID($0) },
            servicePath: properties["Service"]?.variantValue.objectPath,
            flags: properties["Flags"]?.variantValue.stringArray ?? [], properties: Self.decode(properties))
    }

    package mutating func apply(changed: [String: DBusValue]) {
        apply(Self.decode(changed))
    }

    static func decode(_ changed: [String: DBusValue]) -> [BLECharacteristicProperty] {
        var properties: [BLECharacteristicProperty] = []
        for (key, wrapped) in changed {
            let value = wrapped.variantValue
            switch key {
            case "Notifying": properties.append(.notifying(value.bool ?? false))
            case "NotifyAcquired": properties.append(.notifyAcquired(value.bool))
            case "MTU": properties.append(.mtu(value.uint16))
            case "Value": if let bytes = value.bytes { properties.append(.value(bytes)) }
            default: break
            }
        }
        return properties
    }
}
