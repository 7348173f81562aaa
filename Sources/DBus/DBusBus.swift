/// Which message bus a `DBusConnection` talks to.
package enum DBusBus: Sendable, Hashable {
    /// The system bus; libdbus honours `DBUS_SYSTEM_BUS_ADDRESS` when it is set.
    case system
    /// A bus at an explicit address such as `unix:path=/run/dbus/system_bus_socket`.
    case address(String)
}
