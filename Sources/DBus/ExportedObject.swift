/// An exported interface as the connection keeps it: lookups by name, declaration order for replies.
struct ExportedInterface {
    var declaration: DBusInterface
    var methods: [String: DBusMethod]
    var properties: [String: DBusProperty]

    init(_ declaration: DBusInterface) {
        self.declaration = declaration
        methods = Dictionary(declaration.methods.map { ($0.name, $0) }, uniquingKeysWith: { $1 })
        properties = Dictionary(declaration.properties.map { ($0.name, $0) }, uniquingKeysWith: { $1 })
    }

    /// Current value of a readable property (nil when absent or write-only).
    func value(of name: String) -> DBusValue? {
        guard let property = properties[name], property.access.isReadable else { return nil }
        switch property.source {
        case .stored(let value): return value
        case .computed(let getter): return getter()
        }
    }

    /// `a{sv}` of every readable, present property, in declaration order.
    var allProperties: DBusValue {
        var entries: [DBusDictEntry] = []
        for property in declaration.properties {
            if let value = value(of: property.name) {
                entries.append(DBusDictEntry(key: .string(property.name), value: .variant(value)))
            }
        }
        return .dictionary(keySignature: "s", valueSignature: "v", entries)
    }
}

/// The interfaces exported at one path, in the order they were added.
struct ExportedObject {
    var interfaces: [String: ExportedInterface] = [:]
    var order: [String] = []

    /// `a{sa{sv}}`: every interface with its properties (the shape of GetManagedObjects and InterfacesAdded).
    func interfacesAndProperties(_ names: [String]? = nil) -> DBusValue {
        let entries = (names ?? order).compactMap { name in
            interfaces[name].map { DBusDictEntry(key: .string(name), value: $0.allProperties) }
        }
        return .dictionary(keySignature: "s", valueSignature: "a{sv}", entries)
    }
}

enum DBusStandardInterface {
    static let properties = "org.freedesktop.DBus.Properties"
    static let introspectable = "org.freedesktop.DBus.Introspectable"
    static let objectManager = "org.freedesktop.DBus.ObjectManager"
    static let peer = "org.freedesktop.DBus.Peer"
}

/// Whether `path` lies strictly below `root`.
func isDescendant(_ path: String, of root: String) -> Bool {
    root == "/" ? path != "/" : path.hasPrefix(root + "/")
}
