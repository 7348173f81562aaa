/// The built-in org.freedesktop.DBus.Properties, ObjectManager and Introspectable of exported objects.
extension DBusConnection {
    func handleProperties(_ call: DBusMethodCall) throws -> [DBusValue] {
        let strings = call.arguments.map(\.string)
        guard let interfaceName = strings.first ?? nil else {
            throw DBusError.invalid("Properties.\(call.member) needs an interface name as its first argument")
        }
        guard let object = objects[call.path] else {
            throw DBusError(name: DBusError.unknownObject, message: "no object is exported at \(call.path)")
        }
        guard let interface = object.interfaces[interfaceName] else {
            throw DBusError(name: DBusError.unknownInterface, message: "\(call.path) has no interface \(interfaceName)")
        }
        switch call.member {
        case "GetAll":
            return [interface.allProperties]
        case "Get":
            guard call.arguments.count == 2, let name = strings[1] else {
                throw DBusError.invalid("Properties.Get takes (ss)")
            }
            guard let property = interface.properties[name] else {
                throw DBusError(name: DBusError.unknownProperty, message: "\(interfaceName) has no property \(name)")
            }
            guard property.access.isReadable else {
                throw DBusError(name: DBusError.accessDenied, message: "\(interfaceName).\(name) is write-only")
            }
            guard let value = interface.value(of: name) else {
                throw DBusError(
                    name: DBusError.unknownProperty,
                    message: "\(interfaceName).\(name) has no value at the moment")
            }
            return [.variant(value)]
        case "Set":
            guard call.arguments.count == 3, let name = strings[1], case .variant(let value) = call.arguments[2] else {
                throw DBusError.invalid("Properties.Set takes (ssv)")
            }
            guard let property = interface.properties[name] else {
                throw DBusError(name: DBusError.unknownProperty, message: "\(interfaceName) has no property \(name)")
            }
            guard property.access.isWritable else {
                throw DBusError(name: DBusError.propertyReadOnly, message: "\(interfaceName).\(name) is read-only")
            }
            guard value.signature == property.signature else {
                throw DBusError.invalid(
                    "\(interfaceName).\(name) has type \(property.signature), not \(value.signature)")
            }
            if let setter = property.setter {
                try setter(value)
            } else {
                try setProperty(path: call.path, interface: interfaceName, name: name, value: value)
            }
            return []
        default:
            throw DBusError(
                name: DBusError.unknownMethod,
                message: "org.freedesktop.DBus.Properties has no method \(call.member)")
        }
    }

    /// `a{oa{sa{sv}}}` of every object below `root`.
    func managedObjects(below root: String) -> DBusValue {
        let entries = objects.keys.sorted().filter { isDescendant($0, of: root) }.map { path in
            DBusDictEntry(key: .objectPath(path), value: objects[path]!.interfacesAndProperties())
        }
        return .dictionary(keySignature: "o", valueSignature: "a{sa{sv}}", entries)
    }

    func introspectionXML(for path: String) -> String {
        var children = Set<String>()
        for exported in Set(objects.keys).union(objectManagerRoots) where isDescendant(exported, of: path) {
            let rest = exported.dropFirst(path == "/" ? 1 : path.count + 1)
            if let first = rest.split(separator: "/").first { children.insert(String(first)) }
        }
        return DBusIntrospection.document(
            interfaces: objects[path].map { object in object.order.compactMap { object.interfaces[$0]?.declaration } }
                ?? [],
            isObject: objects[path] != nil, isObjectManager: objectManagerRoots.contains(path),
            children: children.sorted())
    }
}
