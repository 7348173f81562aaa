internal import CDBus

extension DBusConnection {
    /// Emits `PropertiesChanged(interface, {property: <ay value>}, [])` from `path`, as `propertiesChanged` does,
    /// writing the message directly: no `DBusValue` tree, dictionary or description string per value.
    ///
    /// For the local peripheral's StartNotify path, where each notification is one such signal (the value of a
    /// characteristic). Throws as `emitSignal` does.
    package func emitByteArrayChange(path: String, interface: String, property: String, value: [UInt8]) throws {
        try emitByteArrayChange(
            from: DBusSignalOrigin(path: path, interface: interface), property: property, value: value)
    }

    /// `emitByteArrayChange(path:interface:property:value:)` from a source whose names were checked once, when it
    /// was made: checking them on every value cost about 4,000 instructions.
    package func emitByteArrayChange(from source: DBusSignalOrigin, property: String, value: [UInt8]) throws {
        guard let message = dbus_message_new_signal(source.path, DBusStandardInterface.properties, "PropertiesChanged")
        else {
            throw DBusError(name: DBusError.noMemory, message: "cannot create PropertiesChanged of \(source.path)")
        }
        defer { dbus_message_unref(message) }
        guard
            Self.appendByteArrayChange(to: message, interface: source.interface, property: property, value: value)
        else {
            throw DBusError(name: DBusError.noMemory, message: "cannot write PropertiesChanged of \(source.path)")
        }
        try send(message, "PropertiesChanged")
    }

    /// The arguments `s a{sv} as`, with one entry whose variant holds `ay`; false when libdbus runs out of memory.
    private static func appendByteArrayChange(
        to message: OpaquePointer, interface: String, property: String, value: [UInt8]
    ) -> Bool {
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

/// An object path and an interface that libdbus accepts, checked when made: what emits a signal per value from one
/// object keeps one, so the names are not checked again for each value (libdbus aborts the process on an invalid
/// name, which is why they are checked at all).
package struct DBusSignalOrigin: Sendable {
    package let path: String
    package let interface: String

    package init(path: String, interface: String) throws(DBusError) {
        try DBusNameCheck.objectPath(path)
        try DBusNameCheck.interface(interface)
        self.path = path
        self.interface = interface
    }
}
