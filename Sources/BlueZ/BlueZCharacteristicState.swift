import BluetoothCore
import DBus

/// A remote GATT characteristic as BlueZ exports it (org.bluez.GattCharacteristic1).
package struct BlueZCharacteristicState: Sendable, Hashable {
    package var path: String
    package var uuid: BluetoothUUID?
    /// The path of the service (org.bluez.GattService1) the characteristic belongs to.
    package var servicePath: String
    package var flags: [String]
    package var notifying = false
    package var notifyAcquired: Bool?
    package var mtu: UInt16?

    package init(path: String, properties: [String: DBusValue]) {
        self.path = path
        uuid = properties["UUID"]?.variantValue.string.flatMap { BluetoothUUID($0) }
        servicePath = properties["Service"]?.variantValue.objectPath ?? Self.parentPath(of: path)
        flags = properties["Flags"]?.variantValue.stringArray ?? []
        apply(changed: properties)
    }

    package mutating func apply(changed: [String: DBusValue]) {
        for (key, wrapped) in changed {
            let value = wrapped.variantValue
            switch key {
            case "Notifying": notifying = value.bool ?? false
            case "NotifyAcquired": notifyAcquired = value.bool
            case "MTU": mtu = value.uint16
            default: break
            }
        }
    }

    package var canNotify: Bool { flags.contains("notify") || flags.contains("indicate") }

    static func parentPath(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return path }
        return String(path[..<slash])
    }
}
