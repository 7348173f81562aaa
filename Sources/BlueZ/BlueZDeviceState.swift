import BluetoothCore
import DBus

/// What BlueZ tells about one remote device (org.bluez.Device1), decoded once from its D-Bus properties.
///
/// Optional properties stay nil while BlueZ leaves them out (notes: absent, not zero).
package struct BlueZDeviceState: Sendable, Hashable {
    package var path: String
    package var adapterPath: String
    package var address: BluetoothAddress?
    package var addressType: String?
    package var name: String?
    package var alias: String?
    package var rssi: Int16?
    package var txPower: Int16?
    package var manufacturerData: [UInt16: [UInt8]] = [:]
    package var serviceData: [String: [UInt8]] = [:]
    package var uuids: [String] = []
    package var connected = false
    package var servicesResolved = false
    package var paired = false
    package var trusted = false

    package init(path: String, properties: [String: DBusValue]) {
        self.path = path
        adapterPath = properties["Adapter"]?.variantValue.objectPath ?? Self.adapterPath(of: path)
        apply(changed: properties, invalidated: [])
    }

    /// What an advert shows: names, RSSI, tx power, manufacturer and service data, advertised UUIDs.
    private struct AdvertView: Equatable {
        var name: String?, alias: String?, rssi: Int16?, txPower: Int16?
        var manufacturerData: [UInt16: [UInt8]], serviceData: [String: [UInt8]], uuids: [String]
    }

    private var advertView: AdvertView {
        AdvertView(
            name: name, alias: alias, rssi: rssi, txPower: txPower, manufacturerData: manufacturerData,
            serviceData: serviceData, uuids: uuids)
    }

    /// Applies a PropertiesChanged (or the initial property set); returns whether anything an advert shows changed.
    @discardableResult
    package mutating func apply(changed: [String: DBusValue], invalidated: [String]) -> Bool {
        let before = advertView
        for (key, wrapped) in changed {
            let value = wrapped.variantValue
            switch key {
            case "Address": address = value.string.flatMap { BluetoothAddress($0) }
            case "AddressType": addressType = value.string
            case "Name": name = value.string
            case "Alias": alias = value.string
            case "RSSI": rssi = value.int16
            case "TxPower": txPower = value.int16
            case "Connected": connected = value.bool ?? false
            case "ServicesResolved": servicesResolved = value.bool ?? false
            case "Paired": paired = value.bool ?? false
            case "Trusted": trusted = value.bool ?? false
            case "UUIDs": uuids = value.stringArray ?? []
            case "ManufacturerData":
                var decoded: [UInt16: [UInt8]] = [:]
                for (id, data) in value.uint16KeyedDictionary ?? [:] {
                    decoded[id] = data.variantValue.bytes ?? []
                }
                manufacturerData = decoded
            case "ServiceData":
                var decoded: [String: [UInt8]] = [:]
                for (uuid, data) in value.stringKeyedDictionary ?? [:] {
                    decoded[uuid] = data.variantValue.bytes ?? []
                }
                serviceData = decoded
            default: break
            }
        }
        for key in invalidated {
            switch key {
            case "RSSI": rssi = nil
            case "TxPower": txPower = nil
            case "Name": name = nil
            case "ManufacturerData": manufacturerData = [:]
            case "ServiceData": serviceData = [:]
            default: break
            }
        }
        return before != advertView
    }

    /// `/org/bluez/hci0/dev_…` → `/org/bluez/hci0`.
    static func adapterPath(of devicePath: String) -> String {
        guard let slash = devicePath.lastIndex(of: "/") else { return devicePath }
        return String(devicePath[..<slash])
    }
}
