package import BluetoothCore
package import DBus

/// One remote device's GATT database as BlueZ exports it: services, their characteristics and descriptors, in
/// handle order (BlueZ names the objects `serviceXXXX/charXXXX/descXXXX` after their handles, in fixed-width hex).
package struct BlueZGATTHierarchy: Sendable, Hashable {
    package struct Descriptor: Sendable, Hashable {
        package var path: String
        package var uuid: BluetoothUUID?
        package var flags: [String]
    }

    package struct Characteristic: Sendable, Hashable {
        package var path: String
        package var uuid: BluetoothUUID?
        package var flags: [String]
        package var descriptors: [Descriptor]
    }

    package struct Service: Sendable, Hashable {
        package var path: String
        package var uuid: BluetoothUUID?
        package var primary: Bool
        package var characteristics: [Characteristic]
    }

    package var services: [Service]

    /// Picks the GATT objects below `devicePath` out of a GetManagedObjects reply.
    package init(managedObjects: DBusValue, devicePath: String) {
        let prefix = devicePath + "/"
        var services: [String: Service] = [:]
        var characteristics: [String: Characteristic] = [:]
        var descriptors: [(parent: String, descriptor: Descriptor)] = []
        for entry in managedObjects.dictionaryEntries ?? [] {
            guard let path = entry.key.objectPath, path.hasPrefix(prefix),
                let interfaces = entry.value.stringKeyedDictionary
            else { continue }
            func properties(_ name: String) -> [String: DBusValue]? { interfaces[name]?.stringKeyedDictionary }
            func uuid(_ properties: [String: DBusValue]) -> BluetoothUUID? {
                properties["UUID"]?.variantValue.string.flatMap { BluetoothUUID($0) }
            }
            if let service = properties(BlueZName.gattService) {
                services[path] = Service(
                    path: path, uuid: uuid(service), primary: service["Primary"]?.variantValue.bool ?? true,
                    characteristics: [])
            } else if let characteristic = properties(BlueZName.gattCharacteristic) {
                characteristics[path] = Characteristic(
                    path: path, uuid: uuid(characteristic),
                    flags: characteristic["Flags"]?.variantValue.stringArray ?? [], descriptors: [])
            } else if let descriptor = properties(BlueZName.gattDescriptor) {
                let parent = descriptor["Characteristic"]?.variantValue.objectPath ?? Self.parent(of: path)
                descriptors.append(
                    (
                        parent,
                        Descriptor(
                            path: path, uuid: uuid(descriptor),
                            flags: descriptor["Flags"]?.variantValue.stringArray ?? [])
                    ))
            }
        }
        for (parent, descriptor) in descriptors.sorted(by: { $0.descriptor.path < $1.descriptor.path }) {
            characteristics[parent]?.descriptors.append(descriptor)
        }
        for characteristic in characteristics.values.sorted(by: { $0.path < $1.path }) {
            services[Self.parent(of: characteristic.path)]?.characteristics.append(characteristic)
        }
        self.services = services.values.sorted { $0.path < $1.path }
    }

    /// Characteristics with `uuid`, optionally only in the service with `serviceUUID`.
    package func characteristics(uuid: BluetoothUUID, service serviceUUID: BluetoothUUID? = nil) -> [Characteristic] {
        services.filter { serviceUUID == nil || $0.uuid == serviceUUID }
            .flatMap(\.characteristics).filter { $0.uuid == uuid }
    }

    static func parent(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return path }
        return String(path[..<slash])
    }
}
