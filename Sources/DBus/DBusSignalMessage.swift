internal import CDBus
import Glibc

/// A received signal as libdbus holds it, read in place: for hot paths that need one or two fields of a signal and
/// must not pay for decoding every argument into `DBusValue`s (a String per name, an array per container).
///
/// Valid only while the tap handler it was given to runs (the message is freed after dispatch): take what you need
/// out of it, never keep it.
package struct DBusSignalMessage {
    enum Storage {
        /// A message libdbus read (or made).
        case libdbus(OpaquePointer)
        /// A whole message as the bus sent it, read by Gattway itself (see `DBusWireRelay`), and its header.
        case wire(UnsafeRawBufferPointer, DBusWireHeader)
    }

    let storage: Storage

    init(_ pointer: OpaquePointer) {
        storage = .libdbus(pointer)
    }

    init(wire bytes: UnsafeRawBufferPointer, header: DBusWireHeader) {
        storage = .wire(bytes, header)
    }

    /// Hands `body` libdbus's message: the one it read, or for a message read off the wire, the one libdbus makes of
    /// its bytes (checked as libdbus checks every message it reads; nil when it declines them). For the reads
    /// that have no way of their own through the wire format.
    func withLibdbusMessage<Result>(_ body: (OpaquePointer) -> Result) -> Result? {
        switch storage {
        case .libdbus(let pointer):
            return body(pointer)
        case .wire(let bytes, _):
            return Self.demarshalled(bytes) { message in
                guard case .libdbus(let pointer) = message.storage else { return nil }
                return body(pointer)
            } ?? nil
        }
    }

    /// The object path the signal was emitted from, as a C string valid while the message is.
    private var pathCharacters: UnsafePointer<CChar>? {
        switch storage {
        case .libdbus(let pointer): dbus_message_get_path(pointer)
        case .wire(_, let header): header.path
        }
    }

    /// The object path the signal was emitted from.
    package var path: String {
        pathCharacters.map { String(cString: $0) } ?? ""
    }

    /// The object path, as `previous` itself when it is the same path: a signal from the object of the last one
    /// (a device advertising again) then allocates no String.
    package func path(reusing previous: String) -> String {
        guard let path = pathCharacters else { return "" }
        return previous.withCString { strcmp($0, path) == 0 } ? previous : String(cString: path)
    }

    /// The object path's bytes (without the terminating NUL), valid while the message is; nil when it has none.
    /// Not a generic method taking a closure: called from another module, that would run unspecialized.
    package var pathBytes: UnsafeRawBufferPointer? {
        guard let path = pathCharacters else { return nil }
        return UnsafeRawBufferPointer(start: path, count: strlen(path))
    }

    /// The whole signal decoded, as signal streams see it.
    package var decoded: DBusSignal {
        withLibdbusMessage { pointer in
            DBusSignal(
                sender: DBusConnection.string(dbus_message_get_sender(pointer)) ?? "",
                path: DBusConnection.string(dbus_message_get_path(pointer)) ?? "",
                interface: DBusConnection.string(dbus_message_get_interface(pointer)) ?? "",
                member: DBusConnection.string(dbus_message_get_member(pointer)) ?? "",
                arguments: DBusMessageReader.arguments(of: pointer))
        } ?? DBusSignal(sender: "", path: "", interface: "", member: "", arguments: [])
    }

    /// For `PropertiesChanged(interface, {property: <ay>}, [])`, a change of that one byte-array property and
    /// nothing else: its bytes. nil for any other shape (more or other properties, another value type, invalidated
    /// properties, another interface, extra arguments).
    ///
    /// One pass over the message with libdbus's iterator, comparing names in place; the bytes are the only copy.
    package func loneByteArrayChange(ofInterface interface: String, property: String) -> [UInt8]? {
        switch storage {
        case .libdbus(let pointer): Self.loneByteArrayChange(of: pointer, ofInterface: interface, property: property)
        case .wire(_, let header): Self.loneByteArrayChange(of: header, ofInterface: interface, property: property)
        }
    }

    /// `loneByteArrayChange` read off the wire: the body holds one property, and its value is an `ay`.
    private static func loneByteArrayChange(
        of header: DBusWireHeader, ofInterface interface: String, property: String
    ) -> [UInt8]? {
        guard header.hasSignature("sa{sv}as") else { return nil }
        var value: [UInt8]?
        var count = 0
        let read = DBusPropertiesChangedBody.visit(
            body: header.body, bigEndian: header.bigEndian, ofInterface: interface
        ) { name, reader in
            count += 1
            guard count == 1, DBusWireCursor.equal(name.bytes, property), let bytes = reader.byteArray() else {
                return false
            }
            value = bytes
            return true
        }
        return read ? value : nil
    }

    private static func loneByteArrayChange(
        of pointer: OpaquePointer, ofInterface interface: String, property: String
    ) -> [UInt8]? {
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
