import Glibc

/// Which message bus a `DBusConnection` talks to.
package enum DBusBus: Sendable, Hashable {
    /// The system bus; libdbus honours `DBUS_SYSTEM_BUS_ADDRESS` when it is set.
    case system
    /// A bus at an explicit address such as `unix:path=/run/dbus/system_bus_socket`.
    case address(String)
}

/// Who reads a connection's bus socket.
package enum DBusReader: Sendable, CaseIterable, CustomStringConvertible {
    /// Gattway itself, with libdbus behind it (see `DBusWireRelay`), when the bus is on a unix socket; libdbus
    /// otherwise.
    case gattway
    /// libdbus alone.
    case libdbus

    /// `.libdbus` when the environment says `GATTWAY_DBUS_READER=libdbus` (to compare the two, or should the relay
    /// ever misread a bus), `.gattway` otherwise.
    package static var fromEnvironment: DBusReader {
        guard let reader = getenv("GATTWAY_DBUS_READER"), String(cString: reader) == "libdbus" else { return .gattway }
        return .libdbus
    }

    package var description: String {
        switch self {
        case .gattway: "gattway"
        case .libdbus: "libdbus"
        }
    }
}
