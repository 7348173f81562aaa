internal import CDBus

/// A `PropertiesChanged(interface, {property: <ay value>}, [])` signal built once through libdbus's writer, whose
/// copies carry later values of the same length, written over the bytes of the copy's body.
///
/// Building the signal costs libdbus about 75,000 instructions, most of them in rewriting the header's signature
/// field after each of the three top-level arguments; a copy with its bytes overwritten costs about 7,000. On the
/// local peripheral's StartNotify path every notification is such a signal.
///
/// `@unchecked Sendable`: the message is never sent or changed after it is built, only copied, and its owner
/// (``DBusSignalOrigin``) copies it under a lock.
final class ByteArrayChangeTemplate: @unchecked Sendable {
    let property: String
    /// The length of the byte array: a copy takes values of exactly this length.
    let length: Int
    private let message: OpaquePointer

    init?(origin: DBusSignalOrigin, property: String, value: [UInt8]) {
        guard let message = dbus_message_new_signal(origin.path, DBusStandardInterface.properties, "PropertiesChanged")
        else { return nil }
        guard Self.append(interface: origin.interface, property: property, value: value, to: message) else {
            dbus_message_unref(message)
            return nil
        }
        self.property = property
        length = value.count
        self.message = message
    }

    deinit { dbus_message_unref(message) }

    /// A new message like the template with `value` in place of its bytes, or nil (libdbus out of memory, or a
    /// value of another length).
    func copy(with value: [UInt8]) -> OpaquePointer? {
        guard value.count == length, let copy = dbus_message_copy(message) else { return nil }
        guard Self.overwriteBytes(of: copy, with: value) else {
            dbus_message_unref(copy)
            return nil
        }
        return copy
    }

    /// Writes `value` over the byte array of `message`, a copy of the template: libdbus hands out a pointer into
    /// the message's own body for a fixed-size array, and a copy's body is its own allocation, so the write changes
    /// that copy alone. False when the message does not have the template's shape or length.
    private static func overwriteBytes(of message: OpaquePointer, with value: [UInt8]) -> Bool {
        var arguments = DBusMessageIter()
        var changed = DBusMessageIter()
        var entry = DBusMessageIter()
        var variant = DBusMessageIter()
        var bytes = DBusMessageIter()
        guard dbus_message_iter_init(message, &arguments) != 0, dbus_message_iter_next(&arguments) != 0,
            dbus_message_iter_get_arg_type(&arguments) == DBusTypeCode.array
        else { return false }
        dbus_message_iter_recurse(&arguments, &changed)
        dbus_message_iter_recurse(&changed, &entry)
        guard dbus_message_iter_next(&entry) != 0, dbus_message_iter_get_arg_type(&entry) == DBusTypeCode.variant
        else { return false }
        dbus_message_iter_recurse(&entry, &variant)
        guard dbus_message_iter_get_arg_type(&variant) == DBusTypeCode.array,
            dbus_message_iter_get_element_type(&variant) == DBusTypeCode.byte
        else { return false }
        dbus_message_iter_recurse(&variant, &bytes)
        var base: UnsafeRawPointer?
        var count: Int32 = 0
        dbus_message_iter_get_fixed_array(&bytes, &base, &count)
        guard Int(count) == value.count else { return false }
        guard let base, count > 0 else { return true }
        value.withUnsafeBytes { source in
            UnsafeMutableRawPointer(mutating: base).copyMemory(from: source.baseAddress!, byteCount: source.count)
        }
        return true
    }

    /// The arguments `s a{sv} as`, with one entry whose variant holds `ay`; false when libdbus runs out of memory.
    private static func append(interface: String, property: String, value: [UInt8], to message: OpaquePointer)
        -> Bool
    {
        var arguments = DBusMessageIter()
        dbus_message_iter_init_append(message, &arguments)
        guard appendString(interface, to: &arguments) else { return false }
        var changed = DBusMessageIter()
        var entry = DBusMessageIter()
        var variant = DBusMessageIter()
        var bytes = DBusMessageIter()
        var invalidated = DBusMessageIter()
        guard dbus_message_iter_open_container(&arguments, DBusTypeCode.array, "{sv}", &changed) != 0,
            dbus_message_iter_open_container(&changed, DBusTypeCode.dictEntry, nil, &entry) != 0,
            appendString(property, to: &entry),
            dbus_message_iter_open_container(&entry, DBusTypeCode.variant, "ay", &variant) != 0,
            dbus_message_iter_open_container(&variant, DBusTypeCode.array, "y", &bytes) != 0
        else { return false }
        let appended = value.withUnsafeBufferPointer { buffer in
            var base = buffer.baseAddress ?? UnsafePointer(bitPattern: 1)  // libdbus wants non-NULL even for 0
            return dbus_message_iter_append_fixed_array(&bytes, DBusTypeCode.byte, &base, Int32(buffer.count))
        }
        return appended != 0
            && dbus_message_iter_close_container(&variant, &bytes) != 0
            && dbus_message_iter_close_container(&entry, &variant) != 0
            && dbus_message_iter_close_container(&changed, &entry) != 0
            && dbus_message_iter_close_container(&arguments, &changed) != 0
            && dbus_message_iter_open_container(&arguments, DBusTypeCode.array, "s", &invalidated) != 0
            && dbus_message_iter_close_container(&arguments, &invalidated) != 0
    }

    private static func appendString(_ string: String, to iterator: inout DBusMessageIter) -> Bool {
        string.withCString { pointer in
            var pointer: UnsafePointer<CChar>? = pointer
            return dbus_message_iter_append_basic(&iterator, DBusTypeCode.string, &pointer) != 0
        }
    }
}
