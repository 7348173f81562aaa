import BluetoothCore
import DBus

/// BlueZ's object tree as this client knows it: adapters, devices, GATT services and characteristics, kept up to
/// date from GetManagedObjects, InterfacesAdded/Removed and PropertiesChanged.
///
/// Memory is bounded: BlueZ keeps an object for every random address it hears, so beyond `maxDevices` the device
/// seen longest ago that is neither connected nor pinned (configured) is forgotten here (it stays in BlueZ).
/// Pure value type: every update returns what changed, the caller decides what to do.
package struct BlueZObjectTree: Sendable {
    package struct Adapter: Sendable, Hashable {
        package var path: String
        package var address: String?
        package var powered: Bool
        package var discovering: Bool
    }

    /// One consequence of an update, for the caller to act on.
    package enum Change: Sendable, Hashable {
        case adapterChanged(path: String)
        case adapterRemoved(path: String)
        case deviceAppeared(path: String)
        /// Some advert-visible property (RSSI, names, manufacturer or service data, tx power) changed.
        case deviceAdvertChanged(path: String)
        case deviceConnectionChanged(path: String)
        case deviceRemoved(path: String, address: BluetoothAddress?)
        case characteristicAppeared(path: String, devicePath: String)
        case characteristicRemoved(path: String, devicePath: String)
        /// A characteristic's `Value` changed: a notification/indication under StartNotify, or a read.
        case characteristicValue(path: String, value: [UInt8])
    }

    package private(set) var adapters: [String: Adapter] = [:]
    package private(set) var devices: [String: BlueZDeviceState] = [:]
    package private(set) var characteristics: [String: BlueZCharacteristicState] = [:]
    /// Service path → service UUID.
    package private(set) var services: [String: BluetoothUUID] = [:]
    /// Device paths whose devices are never evicted.
    package var pinnedDevices: Set<String> = []
    package let maxDevices: Int
    private var lastSeen: [String: UInt64] = [:]
    private var clock: UInt64 = 0
    package private(set) var evictedDeviceCount = 0

    package init(maxDevices: Int) {
        self.maxDevices = max(1, maxDevices)
    }

    /// Replaces everything with a GetManagedObjects reply (`a{oa{sa{sv}}}`).
    package mutating func replaceAll(with managedObjects: DBusValue) -> [Change] {
        var changes: [Change] = devices.values.map { .deviceRemoved(path: $0.path, address: $0.address) }
        changes += adapters.keys.map { .adapterRemoved(path: $0) }
        adapters = [:]
        devices = [:]
        characteristics = [:]
        services = [:]
        lastSeen = [:]
        for entry in managedObjects.dictionaryEntries ?? [] {
            guard let path = entry.key.objectPath, let interfaces = entry.value.stringKeyedDictionary else { continue }
            changes += interfacesAdded(path: path, interfaces: interfaces.mapValues { $0.stringKeyedDictionary ?? [:] })
        }
        return changes
    }

    /// Applies InterfacesAdded.
    package mutating func interfacesAdded(path: String, interfaces: [String: [String: DBusValue]]) -> [Change] {
        var changes: [Change] = []
        if let properties = interfaces[BlueZName.adapter] {
            var adapter = adapters[path] ?? Adapter(path: path, address: nil, powered: false, discovering: false)
            Self.apply(properties, to: &adapter)
            adapters[path] = adapter
            changes.append(.adapterChanged(path: path))
        }
        if let properties = interfaces[BlueZName.device] {
            if devices[path] == nil {
                devices[path] = BlueZDeviceState(path: path, properties: properties)
                changes.append(.deviceAppeared(path: path))
                touch(path)
                changes += evictIfNeeded()
            } else {
                devices[path]!.apply(changed: properties, invalidated: [])
                touch(path)
            }
        }
        if let properties = interfaces[BlueZName.gattService],
            let uuid = properties["UUID"]?.variantValue.string.flatMap({ BluetoothUUID($0) })
        {
            services[path] = uuid
        }
        if let properties = interfaces[BlueZName.gattCharacteristic] {
            let characteristic = BlueZCharacteristicState(path: path, properties: properties)
            characteristics[path] = characteristic
            changes.append(.characteristicAppeared(path: path, devicePath: devicePath(ofGATTObject: path)))
        }
        return changes
    }

    /// Applies InterfacesRemoved.
    package mutating func interfacesRemoved(path: String, interfaces: [String]) -> [Change] {
        var changes: [Change] = []
        for interface in interfaces {
            switch interface {
            case BlueZName.adapter:
                adapters[path] = nil
                changes.append(.adapterRemoved(path: path))
            case BlueZName.device:
                if let device = devices.removeValue(forKey: path) {
                    lastSeen[path] = nil
                    changes.append(.deviceRemoved(path: path, address: device.address))
                }
            case BlueZName.gattService:
                services[path] = nil
            case BlueZName.gattCharacteristic:
                if characteristics.removeValue(forKey: path) != nil {
                    changes.append(.characteristicRemoved(path: path, devicePath: devicePath(ofGATTObject: path)))
                }
            default: break
            }
        }
        return changes
    }

    /// Applies PropertiesChanged of one object.
    package mutating func propertiesChanged(
        path: String, interface: String, changed: [String: DBusValue], invalidated: [String]
    ) -> [Change] {
        switch interface {
        case BlueZName.gattCharacteristic:
            if let value = changed["Value"]?.variantValue.bytes {
                characteristics[path]?.apply(changed: changed)
                return [.characteristicValue(path: path, value: value)]
            }
            characteristics[path]?.apply(changed: changed)
            return []
        case BlueZName.device:
            guard var device = devices[path] else { return [] }
            let wasConnected = (device.connected, device.servicesResolved)
            let advertChanged = device.apply(changed: changed, invalidated: invalidated)
            devices[path] = device
            touch(path)
            var changes: [Change] = []
            if wasConnected != (device.connected, device.servicesResolved) {
                changes.append(.deviceConnectionChanged(path: path))
            }
            if advertChanged { changes.append(.deviceAdvertChanged(path: path)) }
            return changes
        case BlueZName.adapter:
            guard var adapter = adapters[path] else { return [] }
            Self.apply(changed, to: &adapter)
            adapters[path] = adapter
            return [.adapterChanged(path: path)]
        default:
            return []
        }
    }

    /// The characteristics of the device at `devicePath`.
    package func characteristics(ofDevice devicePath: String) -> [BlueZCharacteristicState] {
        let prefix = devicePath + "/"
        return characteristics.values.filter { $0.path.hasPrefix(prefix) }
    }

    /// The characteristic of `devicePath` with `uuid` in the service with `serviceUUID`.
    package func characteristic(
        ofDevice devicePath: String, service serviceUUID: BluetoothUUID, uuid: BluetoothUUID
    ) -> BlueZCharacteristicState? {
        characteristics(ofDevice: devicePath).first {
            $0.uuid == uuid && services[$0.servicePath] == serviceUUID
        }
    }

    /// The device path of a GATT object path (`/org/bluez/hci0/dev_X/service0010/char0011` → `…/dev_X`).
    package func devicePath(ofGATTObject path: String) -> String {
        // The device is the path's first component that starts with "dev_".
        var end = path.startIndex
        for component in path.split(separator: "/", omittingEmptySubsequences: false) {
            end = component.endIndex
            if component.hasPrefix("dev_") { return String(path[..<end]) }
        }
        return path
    }

    private mutating func touch(_ path: String) {
        clock &+= 1
        lastSeen[path] = clock
    }

    private mutating func evictIfNeeded() -> [Change] {
        guard devices.count > maxDevices else { return [] }
        var changes: [Change] = []
        // Evict the oldest unpinned, unconnected devices until back within the bound: usually one, found by one
        // pass (a crowd of new addresses must not cost a sort of every device each).
        while devices.count > maxDevices {
            var oldest: (path: String, seen: UInt64)?
            for (path, seen) in lastSeen where !pinnedDevices.contains(path) && !(devices[path]?.connected ?? false) {
                if seen < oldest?.seen ?? .max { oldest = (path, seen) }
            }
            guard let path = oldest?.path else { break }
            let device = devices.removeValue(forKey: path)
            lastSeen[path] = nil
            let prefix = path + "/"
            for key in characteristics.keys where key.hasPrefix(prefix) { characteristics[key] = nil }
            for key in services.keys where key.hasPrefix(prefix) { services[key] = nil }
            evictedDeviceCount += 1
            changes.append(.deviceRemoved(path: path, address: device?.address))
        }
        return changes
    }

    private static func apply(_ properties: [String: DBusValue], to adapter: inout Adapter) {
        for (key, wrapped) in properties {
            let value = wrapped.variantValue
            switch key {
            case "Address": adapter.address = value.string
            case "Powered": adapter.powered = value.bool ?? false
            case "Discovering": adapter.discovering = value.bool ?? false
            default: break
            }
        }
    }
}
