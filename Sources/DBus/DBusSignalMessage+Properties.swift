internal import CDBus

/// The name of one changed property, compared in place (libdbus's bytes, valid only inside the visiting closure).
package struct DBusPropertyName {
    /// The name's bytes, without the NUL after them.
    let bytes: UnsafeRawBufferPointer

    /// Whether the name is `expected`, without making a String of it: lengths first, then one `memcmp`.
    package func `is`(_ expected: StaticString) -> Bool { DBusWireCursor.equal(bytes, expected) }
}

extension DBusSignalMessage {
    /// For `PropertiesChanged(interface, {name: <value>, …}, [])`: hands each changed property to `visit` in order,
    /// read in place. False when the signal has another shape (another interface, invalidated properties, extra
    /// arguments) or `visit` declines a property, so that the caller can leave the signal to the general path.
    ///
    /// No `DBusValue` is built and libdbus's iterator is not used: the message is marshalled (one copy of its
    /// bytes) and read by `DBusPropertiesChangedBody`, names compared in place and only the values `visit` takes
    /// out copied.
    package func visitChangedProperties(
        ofInterface interface: String, _ visit: (DBusPropertyName, inout DBusVariantReader) -> Bool
    ) -> Bool {
        guard dbus_message_has_signature(pointer, "sa{sv}as") != 0 else { return false }
        return withMarshalledBytes {
            DBusPropertiesChangedBody.visit(marshalledByLibdbus: $0, ofInterface: interface, visit)
        } ?? false
    }

    /// Hands `body` the message's bytes as they go over the wire (one copy, freed after `body`); nil when libdbus
    /// cannot allocate it.
    private func withMarshalledBytes<Result>(_ body: (UnsafeRawBufferPointer) -> Result) -> Result? {
        var data: UnsafeMutablePointer<CChar>?
        var length: Int32 = 0
        guard dbus_message_marshal(pointer, &data, &length) != 0, let data else { return nil }
        defer { dbus_free(data) }
        return body(UnsafeRawBufferPointer(start: data, count: Int(length)))
    }
}

extension DBusSignalMessage {
    /// Hands `body` the message libdbus makes of the marshalled `bytes`, checked as libdbus checks every message it
    /// receives; nil when libdbus declines them. For tests and fuzzing: the reference reading of hand-made bytes.
    package static func demarshalled<Result>(
        _ bytes: UnsafeRawBufferPointer, _ body: (DBusSignalMessage) -> Result
    ) -> Result? {
        guard let base = bytes.baseAddress, bytes.count < Int32.max else { return nil }
        var error = CDBus.DBusError()
        dbus_error_init(&error)
        defer { dbus_error_free(&error) }
        guard let message = dbus_message_demarshal(base.assumingMemoryBound(to: CChar.self), Int32(bytes.count), &error)
        else { return nil }
        defer { dbus_message_unref(message) }
        return body(DBusSignalMessage(message))
    }

    /// The message marshalled: its bytes as they go over the wire.
    package var marshalled: [UInt8] {
        withMarshalledBytes { Array($0) } ?? []
    }
}
