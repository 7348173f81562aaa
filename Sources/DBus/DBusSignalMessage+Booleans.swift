internal import CDBus
import Glibc

extension DBusSignalMessage {
    /// For `PropertiesChanged(interface, {…}, […])`, the new value of the boolean `property` when it is among the
    /// changed properties; nil when it is not, when it is no boolean, or when the signal has another shape.
    ///
    /// Read in place, for taps that watch one flag (such as a device's `Connected`) among signals that mostly
    /// carry other properties: no argument is decoded, nothing is allocated.
    package func changedBoolean(ofInterface interface: String, property: String) -> Bool? {
        withLibdbusMessage { Self.changedBoolean(of: $0, ofInterface: interface, property: property) } ?? nil
    }

    private static func changedBoolean(of pointer: OpaquePointer, ofInterface interface: String, property: String)
        -> Bool?
    {
        var arguments = DBusMessageIter()
        guard dbus_message_iter_init(pointer, &arguments) != 0,
            Self.isString(&arguments, equalTo: interface), dbus_message_iter_next(&arguments) != 0,
            dbus_message_iter_get_arg_type(&arguments) == DBusTypeCode.array,
            dbus_message_iter_get_element_type(&arguments) == DBusTypeCode.dictEntry
        else { return nil }
        var entries = DBusMessageIter()
        dbus_message_iter_recurse(&arguments, &entries)
        while dbus_message_iter_get_arg_type(&entries) == DBusTypeCode.dictEntry {
            var entry = DBusMessageIter()
            dbus_message_iter_recurse(&entries, &entry)
            if Self.isString(&entry, equalTo: property), dbus_message_iter_next(&entry) != 0,
                dbus_message_iter_get_arg_type(&entry) == DBusTypeCode.variant
            {
                var variant = DBusMessageIter()
                dbus_message_iter_recurse(&entry, &variant)
                guard dbus_message_iter_get_arg_type(&variant) == DBusTypeCode.boolean else { return nil }
                // dbus_bool_t is 32 bits wide.
                var flag: UInt32 = 0
                dbus_message_iter_get_basic(&variant, &flag)
                return flag != 0
            }
            guard dbus_message_iter_next(&entries) != 0 else { break }
        }
        return nil
    }

    /// Whether the iterator stands on a string equal to `expected`, compared in place.
    private static func isString(_ iterator: inout DBusMessageIter, equalTo expected: String) -> Bool {
        guard dbus_message_iter_get_arg_type(&iterator) == DBusTypeCode.string else { return false }
        var value: UnsafePointer<CChar>?
        dbus_message_iter_get_basic(&iterator, &value)
        guard let value else { return false }
        return expected.withCString { strcmp(value, $0) == 0 }
    }
}
