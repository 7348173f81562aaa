/// What the Bluetooth stack tells about one remote device, decoded once.
///
/// Optional properties stay nil while the stack leaves them out (absent, not zero).
package struct BLEDeviceState: Sendable, Hashable {
    /// The device's identifier at its central (a BlueZ object path).
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

    package init(path: String, adapterPath: String? = nil, properties: [BLEDeviceProperty] = []) {
        self.path = path
        self.adapterPath = adapterPath ?? Self.adapterPath(of: path)
        apply(properties)
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

    /// Applies changed (or invalidated, as nil) properties; returns whether anything an advert shows changed.
    @discardableResult
    package mutating func apply(_ properties: [BLEDeviceProperty]) -> Bool {
        let before = advertView
        for property in properties {
            switch property {
            case .address(let value): address = value
            case .addressType(let value): addressType = value
            case .name(let value): name = value
            case .alias(let value): alias = value
            case .rssi(let value): rssi = value
            case .txPower(let value): txPower = value
            case .connected(let value): connected = value
            case .servicesResolved(let value): servicesResolved = value
            case .paired(let value): paired = value
            case .trusted(let value): trusted = value
            case .uuids(let value): uuids = value
            case .manufacturerData(let value): manufacturerData = value
            case .serviceData(let value): serviceData = value
            }
        }
        return before != advertView
    }

    /// `/org/bluez/hci0/dev_…` → `/org/bluez/hci0`.
    package static func adapterPath(of devicePath: String) -> String {
        guard let slash = devicePath.lastIndex(of: "/") else { return devicePath }
        return String(devicePath[..<slash])
    }
}

/// One property of a remote device as the stack reports it; nil where it invalidated the property.
package enum BLEDeviceProperty: Sendable, Hashable {
    case address(BluetoothAddress?)
    case addressType(String?)
    case name(String?)
    case alias(String?)
    case rssi(Int16?)
    case txPower(Int16?)
    case connected(Bool)
    case servicesResolved(Bool)
    case paired(Bool)
    case trusted(Bool)
    case uuids([String])
    case manufacturerData([UInt16: [UInt8]])
    case serviceData([String: [UInt8]])
}
