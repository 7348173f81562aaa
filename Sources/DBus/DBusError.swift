/// A D-Bus error: either an error reply from a peer (its name and message are kept as sent) or a local failure,
/// named with the standard `org.freedesktop.DBus.Error.*` names so callers handle both alike.
///
/// A call that times out fails with `org.freedesktop.DBus.Error.NoReply`, the name libdbus uses.
package struct DBusError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The error name, e.g. `org.bluez.Error.InProgress`.
    package var name: String
    /// The human-readable explanation sent with the error (may be empty).
    package var message: String

    package init(name: String, message: String) {
        self.name = name
        self.message = message
    }

    package var description: String { message.isEmpty ? name : "\(name): \(message)" }

    package static let failed = "org.freedesktop.DBus.Error.Failed"
    package static let noReply = "org.freedesktop.DBus.Error.NoReply"
    package static let disconnected = "org.freedesktop.DBus.Error.Disconnected"
    package static let unknownMethod = "org.freedesktop.DBus.Error.UnknownMethod"
    package static let unknownObject = "org.freedesktop.DBus.Error.UnknownObject"
    package static let unknownInterface = "org.freedesktop.DBus.Error.UnknownInterface"
    package static let unknownProperty = "org.freedesktop.DBus.Error.UnknownProperty"
    package static let propertyReadOnly = "org.freedesktop.DBus.Error.PropertyReadOnly"
    package static let invalidArgs = "org.freedesktop.DBus.Error.InvalidArgs"
    package static let invalidSignature = "org.freedesktop.DBus.Error.InvalidSignature"
    package static let limitsExceeded = "org.freedesktop.DBus.Error.LimitsExceeded"
    package static let noMemory = "org.freedesktop.DBus.Error.NoMemory"
    package static let nameHasNoOwner = "org.freedesktop.DBus.Error.NameHasNoOwner"
    package static let serviceUnknown = "org.freedesktop.DBus.Error.ServiceUnknown"
    package static let accessDenied = "org.freedesktop.DBus.Error.AccessDenied"
    package static let notSupported = "org.freedesktop.DBus.Error.NotSupported"

    static func notConnected(_ what: String) -> DBusError {
        DBusError(name: disconnected, message: "\(what): the connection to the bus is closed")
    }

    static func invalid(_ message: String) -> DBusError {
        DBusError(name: invalidArgs, message: message)
    }
}
