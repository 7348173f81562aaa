/// One interface of an exported object: its methods, properties and signal declarations.
package struct DBusInterface: Sendable {
    package var name: String
    package var methods: [DBusMethod]
    package var properties: [DBusProperty]
    package var signals: [DBusSignalDeclaration]

    package init(
        name: String, methods: [DBusMethod] = [], properties: [DBusProperty] = [],
        signals: [DBusSignalDeclaration] = []
    ) {
        self.name = name
        self.methods = methods
        self.properties = properties
        self.signals = signals
    }
}

/// A named, typed argument, used for introspection.
package struct DBusArgument: Sendable, Hashable {
    package var name: String
    package var signature: String

    package init(_ name: String, _ signature: String) {
        self.name = name
        self.signature = signature
    }
}

/// An incoming method call as handlers see it.
package struct DBusMethodCall: Sendable {
    /// The caller's unique name.
    package var sender: String
    package var path: String
    /// Absent when the caller did not name one (the method is then looked up in every interface).
    package var interface: String?
    package var member: String
    package var arguments: [DBusValue]
}

/// How a method is answered. Throwing a `DBusError` sends an error reply with its name and message; any other
/// error becomes `org.freedesktop.DBus.Error.Failed` with the error's description.
package enum DBusMethodHandler: Sendable {
    /// Runs on the connection's loop and replies at once; it must not block.
    case sync(@Sendable (DBusMethodCall) throws -> [DBusValue])
    /// Runs in its own task and replies when done; other calls are served meanwhile.
    case async(@Sendable (DBusMethodCall) async throws -> [DBusValue])
}

package struct DBusMethod: Sendable {
    package var name: String
    package var inputs: [DBusArgument]
    package var outputs: [DBusArgument]
    package var handler: DBusMethodHandler

    package init(
        name: String, inputs: [DBusArgument] = [], outputs: [DBusArgument] = [], handler: DBusMethodHandler
    ) {
        self.name = name
        self.inputs = inputs
        self.outputs = outputs
        self.handler = handler
    }
}

package enum DBusPropertyAccess: String, Sendable, Hashable {
    case read, write, readwrite

    var isReadable: Bool { self != .write }
    var isWritable: Bool { self != .read }
}

/// Where a property's value comes from.
package enum DBusPropertySource: Sendable {
    /// Kept by the connection and changed with `DBusConnection.setProperty(…)`, which also emits
    /// `PropertiesChanged`: one dictionary update and one signal, cheap enough for thousands of updates a second.
    /// nil means the property is currently absent (left out of GetAll and GetManagedObjects).
    case stored(DBusValue?)
    /// Asked for on every read; nil means absent.
    case computed(@Sendable () -> DBusValue?)
}

package struct DBusProperty: Sendable {
    package var name: String
    package var signature: String
    package var access: DBusPropertyAccess
    package var source: DBusPropertySource
    /// Called by `Properties.Set` with a value already checked against `signature`. Without a setter, a writable
    /// stored property is updated in place (and `PropertiesChanged` emitted).
    package var setter: (@Sendable (DBusValue) throws -> Void)?

    package init(
        name: String, signature: String, access: DBusPropertyAccess = .read, source: DBusPropertySource,
        setter: (@Sendable (DBusValue) throws -> Void)? = nil
    ) {
        self.name = name
        self.signature = signature
        self.access = access
        self.source = source
        self.setter = setter
    }
}

package struct DBusSignalDeclaration: Sendable, Hashable {
    package var name: String
    package var arguments: [DBusArgument]

    package init(name: String, arguments: [DBusArgument] = []) {
        self.name = name
        self.arguments = arguments
    }
}
