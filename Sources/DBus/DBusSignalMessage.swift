internal import CDBus
import Glibc

/// A received signal as libdbus holds it, read in place: for hot paths that need one or two fields of a signal and
/// must not pay for decoding every argument into `DBusValue`s (a String per name, an array per container).
///
/// Valid only while the tap handler it was given to runs (the message is freed after dispatch): take what you need
/// out of it, never keep it.
package struct DBusSignalMessage {
    let pointer: OpaquePointer

    init(_ pointer: OpaquePointer) {
        self.pointer = pointer
    }

    /// The object path the signal was emitted from.
    package var path: String {
        dbus_message_get_path(pointer).map { String(cString: $0) } ?? ""
    }

    /// The object path, as `previous` itself when it is the same path: a signal from the object of the last one
    /// (a device advertising again) then allocates no String.
    package func path(reusing previous: String) -> String {
        guard let path = dbus_message_get_path(pointer) else { return "" }
        return previous.withCString { strcmp($0, path) == 0 } ? previous : String(cString: path)
    }

    /// The whole signal decoded, as signal streams see it.
    package var decoded: DBusSignal {
        DBusSignal(
            sender: DBusConnection.string(dbus_message_get_sender(pointer)) ?? "",
            path: DBusConnection.string(dbus_message_get_path(pointer)) ?? "",
            interface: DBusConnection.string(dbus_message_get_interface(pointer)) ?? "",
            member: DBusConnection.string(dbus_message_get_member(pointer)) ?? "",
            arguments: DBusMessageReader.arguments(of: pointer))
    }

    /// For `PropertiesChanged(interface, {property: <ay>}, [])`, a change of that one byte-array property and
    /// nothing else: its bytes. nil for any other shape (more or other properties, another value type, invalidated
    /// properties, another interface, extra arguments).
    ///
    /// One pass over the message with libdbus's iterator, comparing names in place; the bytes are the only copy.
    package func loneByteArrayChange(ofInterface interface: String, property: String) -> [UInt8]? {
        // The signature settles the argument types and that nothing follows the invalidated list, so the walk
        // below only checks what it says nothing of: the names, the variant's type, and the counts.
        guard let signature = dbus_message_get_signature(pointer), strcmp(signature, "sa{sv}as") == 0 else {
            return nil
        }
        var arguments = DBusMessageIter()
        guard dbus_message_iter_init(pointer, &arguments) != 0,
            Self.stringEquals(&arguments, interface), dbus_message_iter_next(&arguments) != 0
        else { return nil }
        var entries = DBusMessageIter()
        dbus_message_iter_recurse(&arguments, &entries)
        guard dbus_message_iter_get_arg_type(&entries) == DBusTypeCode.dictEntry else { return nil }
        var entry = DBusMessageIter()
        dbus_message_iter_recurse(&entries, &entry)
        guard Self.stringEquals(&entry, property), dbus_message_iter_next(&entry) != 0 else { return nil }
        var variant = DBusMessageIter()
        dbus_message_iter_recurse(&entry, &variant)
        var invalidated = DBusMessageIter()
        guard dbus_message_iter_get_arg_type(&variant) == DBusTypeCode.array,
            dbus_message_iter_get_element_type(&variant) == DBusTypeCode.byte,
            // Exactly one changed property.
            dbus_message_iter_next(&entries) == 0,
            // Then an empty list of invalidated properties.
            dbus_message_iter_next(&arguments) != 0
        else { return nil }
        dbus_message_iter_recurse(&arguments, &invalidated)
        guard dbus_message_iter_get_arg_type(&invalidated) == DBusTypeCode.invalid else { return nil }
        var bytes = DBusMessageIter()
        dbus_message_iter_recurse(&variant, &bytes)
        var base: UnsafeRawPointer?
        var count: Int32 = 0
        dbus_message_iter_get_fixed_array(&bytes, &base, &count)
        guard let base, count > 0 else { return [] }
        // Copied from a raw buffer, which the compiler inlines with the array's type metadata cached at the call
        // site; `init(unsafeUninitializedCapacity:)` called the standard library's unspecialized allocation, which
        // looks the metadata up in the runtime's cache on every value.
        return Array(UnsafeRawBufferPointer(start: base, count: Int(count)))
    }

    /// Whether the iterator stands on a string equal to `expected`, compared in place.
    private static func stringEquals(_ iterator: inout DBusMessageIter, _ expected: String) -> Bool {
        guard dbus_message_iter_get_arg_type(&iterator) == DBusTypeCode.string else { return false }
        var value: UnsafePointer<CChar>?
        dbus_message_iter_get_basic(&iterator, &value)
        guard let value else { return false }
        return expected.withCString { strcmp(value, $0) == 0 }
    }
}
