/// The objects of a central as the bridge knows them: adapters, devices, GATT services and characteristics, kept up
/// to date from `BLECentralEvent`s.
///
/// Memory is bounded: BlueZ keeps an object for every random address it hears, so beyond `maxDevices` the device
/// seen longest ago that is neither connected nor pinned (configured) is forgotten here (it stays in the stack).
/// Pure value type: every update returns what changed, the caller decides what to do.
package struct BLEObjectTree: Sendable {
    package struct Adapter: Sendable, Hashable {
        package var path: String
        package var address: String?
        package var powered: Bool
        package var discovering: Bool

        package init(path: String, address: String? = nil, powered: Bool = false, discovering: Bool = false) {
            self.path = path
            self.address = address
            self.powered = powered
            self.discovering = discovering
        }

        mutating func apply(_ properties: [BLEAdapterProperty]) {
            for property in properties {
                switch property {
                case .address(let value): address = value
                case .powered(let value): powered = value
                case .discovering(let value): discovering = value
                }
            }
        }
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
    package private(set) var devices: [String: BLEDeviceState] = [:]
    package private(set) var characteristics: [String: BLECharacteristicState] = [:]
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

    /// Applies one event; the stack leaving empties the tree.
    @discardableResult
    package mutating func apply(_ event: BLECentralEvent) -> [Change] {
        switch event {
        case .snapshot(let objects): replaceAll(with: objects)
        case .serviceLost: replaceAll(with: [])
        case .interfacesAdded(let path, let interfaces): interfacesAdded(path: path, interfaces)
        case .interfacesRemoved(let path, let kinds): interfacesRemoved(path: path, kinds)
        case .adapterChanged(let path, let properties): adapterChanged(path: path, properties)
        case .deviceChanged(let path, let properties): deviceChanged(path: path, properties)
        case .characteristicChanged(let path, let properties): characteristicChanged(path: path, properties)
        }
    }

    /// Replaces everything with `objects`.
    package mutating func replaceAll(with objects: [BLEObject]) -> [Change] {
        var changes: [Change] = devices.values.map { .deviceRemoved(path: $0.path, address: $0.address) }
        changes += adapters.keys.map { .adapterRemoved(path: $0) }
        adapters = [:]
        devices = [:]
        characteristics = [:]
        services = [:]
        lastSeen = [:]
        for object in objects { changes += interfacesAdded(path: object.path, object.interfaces) }
        return changes
    }

    package mutating func interfacesAdded(path: String, _ interfaces: BLEInterfaces) -> [Change] {
        var changes: [Change] = []
        if let properties = interfaces.adapter {
            var adapter = adapters[path] ?? Adapter(path: path)
            adapter.apply(properties)
            adapters[path] = adapter
            changes.append(.adapterChanged(path: path))
        }
        if var device = interfaces.device {
            device.path = path
            let appeared = devices[path] == nil
            devices[path] = device
            touch(path)
            if appeared {
                changes.append(.deviceAppeared(path: path))
                changes += evictIfNeeded()
            }
        }
        if let uuid = interfaces.serviceUUID { services[path] = uuid }
        if var characteristic = interfaces.characteristic {
            characteristic.path = path
            characteristics[path] = characteristic
            changes.append(.characteristicAppeared(path: path, devicePath: devicePath(ofGATTObject: path)))
        }
        return changes
    }

    package mutating func interfacesRemoved(path: String, _ kinds: Set<BLEInterfaceKind>) -> [Change] {
        var changes: [Change] = []
        if kinds.contains(.adapter), adapters.removeValue(forKey: path) != nil {
            changes.append(.adapterRemoved(path: path))
        }
        if kinds.contains(.device), let device = devices.removeValue(forKey: path) {
            lastSeen[path] = nil
            changes.append(.deviceRemoved(path: path, address: device.address))
        }
        if kinds.contains(.gattService) { services[path] = nil }
        if kinds.contains(.gattCharacteristic), characteristics.removeValue(forKey: path) != nil {
            changes.append(.characteristicRemoved(path: path, devicePath: devicePath(ofGATTObject: path)))
        }
        return changes
    }

    package mutating func deviceChanged(path: String, _ properties: [BLEDeviceProperty]) -> [Change] {
        // Changed in place through the index: a copy out and back would copy each dictionary `apply` changes,
        // since the entry still held it (the advert path's sync changes every heard device's data this way).
        // (Reading a field through `devices.values[index]` would copy the whole state out, so one inout access does
        // it all.)
        guard let index = devices.index(forKey: path) else { return [] }
        let (connectionChanged, advertChanged) = Self.apply(properties, to: &devices.values[index])
        touch(path)
        var changes: [Change] = []
        if connectionChanged {
            changes.append(.deviceConnectionChanged(path: path))
        }
        if advertChanged { changes.append(.deviceAdvertChanged(path: path)) }
        return changes
    }

    package mutating func characteristicChanged(path: String, _ properties: [BLECharacteristicProperty]) -> [Change] {
        characteristics[path]?.apply(properties)
        return properties.compactMap { property in
            if case .value(let value) = property { .characteristicValue(path: path, value: value) } else { nil }
        }
    }

    package mutating func adapterChanged(path: String, _ properties: [BLEAdapterProperty]) -> [Change] {
        guard adapters[path] != nil else { return [] }
        adapters[path]?.apply(properties)
        return [.adapterChanged(path: path)]
    }

    /// The characteristics of the device at `devicePath`.
    package func characteristics(ofDevice devicePath: String) -> [BLECharacteristicState] {
        let prefix = devicePath + "/"
        return characteristics.values.filter { $0.path.hasPrefix(prefix) }
    }

    /// The characteristic of `devicePath` with `uuid` in the service with `serviceUUID`.
    package func characteristic(
        ofDevice devicePath: String, service serviceUUID: BluetoothUUID, uuid: BluetoothUUID
    ) -> BLECharacteristicState? {
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

    /// Applies `properties` to `device`: whether its connection (connected, services resolved) changed, and
    /// whether what it advertises did.
    private static func apply(
        _ properties: [BLEDeviceProperty], to device: inout BLEDeviceState
    ) -> (connection: Bool, advert: Bool) {
        let was = (device.connected, device.servicesResolved)
        let advert = device.apply(properties)
        return (was != (device.connected, device.servicesResolved), advert)
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
}
