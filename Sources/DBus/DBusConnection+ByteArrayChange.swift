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
    /// was made (checking them on every value cost about 4,000 instructions), and which keeps the signal it sent
    /// last as a template for the next value of the same length (see ``ByteArrayChangeTemplate``).
    package func emitByteArrayChange(from source: DBusSignalOrigin, property: String, value: [UInt8]) throws {
        guard let message = source.byteArrayChange(property: property, value: value) else {
            throw DBusError(name: DBusError.noMemory, message: "cannot write PropertiesChanged of \(source.path)")
        }
        defer { dbus_message_unref(message) }
        try send(message, "PropertiesChanged")
    }
}
