internal import CDBus
import Glibc

/// The name of one changed property, compared in place (libdbus's bytes, valid only inside the visiting closure).
package struct DBusPropertyName {
    /// The name's bytes, without the NUL after them.
    let bytes: UnsafeRawBufferPointer

    /// Whether the name is `expected`, without making a String of it: lengths first, then one `memcmp`.
    package func `is`(_ expected: StaticString) -> Bool { DBusWireCursor.equal(bytes, expected) }
}

extension DBusSignalMessage {
    /// Hands `body` the body of this message where libdbus keeps it, and its byte order, when the message's signature
    /// is `sa{sv}as` (PropertiesChanged's): no copy, no allocation (a marshalled copy of a repeated advertisement
    /// report cost about as many instructions as the iterator calls here, but its malloc, realloc and free were most
    /// of the C library's code a report ran). False, without calling `body`, for another signature or when the body
    /// cannot be told for sure.
    ///
    /// libdbus keeps a message's body in one piece and hands out a string argument as a pointer into it, so the
    /// body starts at the first argument's length, 4 bytes before its characters. Where it ends follows from the
    /// lengths its iterator reports of the two arrays after it. Each of the three lengths is read back from those
    /// bytes before any of them is trusted; which byte order reads all three right is the body's.
    ///
    /// Not generic: across modules a generic result went through its type's value witnesses, unspecialized, on
    /// every report; `body` sets what it makes in the caller's variable.
    package func withBodyInPlace(_ body: (UnsafeRawBufferPointer, _ bigEndian: Bool) -> Void) -> Bool {
        switch storage {
        case .libdbus(let pointer):
            return Self.withBodyInPlace(of: pointer, body)
        case .wire(_, let header):
            guard header.hasSignature("sa{sv}as") else { return false }
            body(header.body, header.bigEndian)
            return true
        }
    }

    private static func withBodyInPlace(
        of pointer: OpaquePointer, _ body: (UnsafeRawBufferPointer, _ bigEndian: Bool) -> Void
    ) -> Bool {
        var arguments = DBusMessageIter()
        guard dbus_message_has_signature(pointer, "sa{sv}as") != 0, dbus_message_iter_init(pointer, &arguments) != 0,
            dbus_message_iter_get_arg_type(&arguments) == DBusTypeCode.string
        else { return false }
        var characters: UnsafePointer<CChar>?
        dbus_message_iter_get_basic(&arguments, &characters)
        guard let characters, dbus_message_iter_next(&arguments) != 0,
            dbus_message_iter_get_arg_type(&arguments) == DBusTypeCode.array
        else { return false }
        let changedLength = Self.arrayBytes(&arguments)
        guard dbus_message_iter_next(&arguments) != 0,
            dbus_message_iter_get_arg_type(&arguments) == DBusTypeCode.array
        else { return false }
        let invalidatedLength = Self.arrayBytes(&arguments)
        // Offsets from the body's start, which the format aligns to 8 within the message.
        let stringLength = strlen(characters)
        let changedAt = (4 + stringLength + 1 + 3) & ~3
        let invalidatedAt = (((changedAt + 4 + 7) & ~7) + changedLength + 3) & ~3
        let bytes = UnsafeRawBufferPointer(
            start: UnsafeRawPointer(characters) - 4, count: invalidatedAt + 4 + invalidatedLength)
        func lengthsRead(bigEndian: Bool) -> Bool {
            func uint32(at offset: Int) -> Int {
                let raw = bytes.loadUnaligned(fromByteOffset: offset, as: UInt32.self)
                return Int(bigEndian ? UInt32(bigEndian: raw) : UInt32(littleEndian: raw))
            }
            return uint32(at: 0) == stringLength && uint32(at: changedAt) == changedLength
                && uint32(at: invalidatedAt) == invalidatedLength
        }
        switch (lengthsRead(bigEndian: false), lengthsRead(bigEndian: true)) {
        case (true, false): body(bytes, false)
        case (false, true): body(bytes, true)
        default: return false
        }
        return true
    }

    /// The length in bytes of the array `iterator` is at, which libdbus tells an iterator inside the array.
    private static func arrayBytes(_ iterator: inout DBusMessageIter) -> Int {
        var elements = DBusMessageIter()
        dbus_message_iter_recurse(&iterator, &elements)
        return Int(gattway_dbus_iter_array_bytes(&elements))
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

    /// Hands `body` the message's bytes as they go over the wire (one copy, freed after `body`); nil when libdbus
    /// cannot allocate it.
    private func withMarshalledBytes<Result>(_ body: (UnsafeRawBufferPointer) -> Result) -> Result? {
        switch storage {
        case .wire(let bytes, _): return body(bytes)
        case .libdbus(let pointer): return Self.withMarshalledBytes(of: pointer, body)
        }
    }

    private static func withMarshalledBytes<Result>(
        of pointer: OpaquePointer, _ body: (UnsafeRawBufferPointer) -> Result
    ) -> Result? {
        var data: UnsafeMutablePointer<CChar>?
        var length: Int32 = 0
        guard dbus_message_marshal(pointer, &data, &length) != 0, let data else { return nil }
        defer { dbus_free(data) }
        return body(UnsafeRawBufferPointer(start: data, count: Int(length)))
    }
}

/// A message's type, serial and the header fields it is matched by, as read from libdbus or off the wire: for
/// comparing the two readings (tests and fuzzing).
package struct DBusMessageSummary: Equatable, Sendable {
    package var type: Int
    package var serial: UInt32
    package var sender: String?
    package var path: String?
    package var interface: String?
    package var member: String?
    package var signature: String
    package var carriesDescriptors: Bool
    package var firstString: String?
}

extension DBusSignalMessage {
    /// Hands `body` the message as the relay reads it off the wire (see `DBusWireRelay`): nil when `bytes` are not
    /// exactly one message by its fixed header, or when its header holds anything the relay leaves to libdbus. For
    /// tests and fuzzing.
    package static func readOffTheWire<Result>(
        _ bytes: UnsafeRawBufferPointer, _ body: (DBusSignalMessage) -> Result
    ) -> Result? {
        guard case .message(let total) = DBusWireFrame.length(of: bytes), total == bytes.count,
            let header = DBusWireHeader(message: bytes)
        else { return nil }
        return body(DBusSignalMessage(wire: bytes, header: header))
    }

    /// The length of the message at the start of `bytes` by its fixed header: nil while fewer than 16 bytes are
    /// there or when they cannot start a message. For tests and fuzzing.
    package static func wireLength(of bytes: UnsafeRawBufferPointer) -> Int? {
        guard case .message(let total) = DBusWireFrame.length(of: bytes) else { return nil }
        return total
    }

    /// The message's type, serial and header fields.
    package var summary: DBusMessageSummary {
        switch storage {
        case .libdbus(let pointer):
            var fields = DBusMessageFields(pointer)
            return DBusMessageSummary(
                type: Int(dbus_message_get_type(pointer)), serial: dbus_message_get_serial(pointer),
                sender: DBusConnection.string(fields.sender), path: DBusConnection.string(fields.path),
                interface: DBusConnection.string(fields.interface), member: DBusConnection.string(fields.member),
                signature: DBusConnection.string(dbus_message_get_signature(pointer)) ?? "",
                carriesDescriptors: dbus_message_contains_unix_fds(pointer) != 0,
                firstString: DBusConnection.string(fields.firstArgument()))
        case .wire(_, let header):
            var fields = DBusMessageFields(wire: header)
            return DBusMessageSummary(
                type: Int(header.type), serial: header.serial, sender: DBusConnection.string(fields.sender),
                path: DBusConnection.string(fields.path), interface: DBusConnection.string(fields.interface),
                member: DBusConnection.string(fields.member),
                signature: String(decoding: header.signature, as: UTF8.self), carriesDescriptors: header.unixFDs > 0,
                firstString: DBusConnection.string(fields.firstArgument()))
        }
    }
}
