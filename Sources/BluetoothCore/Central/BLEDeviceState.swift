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
    package var manufacturerData: AdvertisedEntries<UInt16> = [:]
    /// Service data by the UUID's text, as bluetoothd names it.
    package var serviceData: AdvertisedEntries<String> = [:]
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

    /// Applies changed (or invalidated, as nil) properties; returns whether anything an advert shows changed
    /// (names, RSSI, tx power, manufacturer and service data, advertised UUIDs).
    ///
    /// Each advert-visible field is compared as it is set, not through a copy of them all before and after: with
    /// duplicates on, bluetoothd repeats a device's data in every report, and this runs for each one.
    @discardableResult
    package mutating func apply(_ properties: [BLEDeviceProperty]) -> Bool {
        var dataChanged = false
        return apply(properties, dataChanged: &dataChanged)
    }

    /// As `apply(_:)`; also sets `dataChanged` when the name, the manufacturer or the service data changed: what a
    /// passive decoder reads of an advertisement.
    package mutating func apply(_ properties: [BLEDeviceProperty], dataChanged: inout Bool) -> Bool {
        var changed = false
        for property in properties {
            switch property {
            case .address(let value): address = value
            case .addressType(let value): addressType = value
            case .name(let value):
                guard Self.set(&name, value) else { continue }
                changed = true
                dataChanged = true
            case .alias(let value): changed = Self.set(&alias, value) || changed
            case .rssi(let value): changed = Self.set(&rssi, value) || changed
            case .txPower(let value): changed = Self.set(&txPower, value) || changed
            case .connected(let value): connected = value
            case .servicesResolved(let value): servicesResolved = value
            case .paired(let value): paired = value
            case .trusted(let value): trusted = value
            case .uuids(let value): changed = Self.set(&uuids, value) || changed
            case .manufacturerData(let value):
                guard !manufacturerData.hasSameEntries(as: value) else { continue }
                manufacturerData = value
                changed = true
                dataChanged = true
            case .serviceData(let value):
                guard !serviceData.hasSameEntries(as: value) else { continue }
                serviceData = value
                changed = true
                dataChanged = true
            }
        }
        return changed
    }

    /// Whether `other` advertises the same name, manufacturer and service data: what a passive decoder reads.
    package func hasSameAdvertisedData(as other: BLEDeviceState) -> Bool {
        serviceData.hasSameEntries(as: other.serviceData)
            && manufacturerData.hasSameEntries(as: other.manufacturerData) && name == other.name
    }

    /// Sets `field` to `value` when they differ; returns whether they did. An equal value is not assigned, so the
    /// field keeps its storage and the next comparison with it can be one of identity.
    @inline(__always)
    private static func set<Value: Equatable>(_ field: inout Value, _ value: Value) -> Bool {
        guard field != value else { return false }
        field = value
        return true
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
    case manufacturerData(AdvertisedEntries<UInt16>)
    case serviceData(AdvertisedEntries<String>)
}
