/// `org.freedesktop.DBus.Properties.PropertiesChanged(interface, {name: <value>, …}, [])` read straight from the
/// wire format, for the advertisement hot path: from a marshalled message, or from the body of a message where
/// libdbus keeps it (`DBusSignalMessage.withBodyInPlace`). A report of a device is a few dozen bytes, and reading it
/// here costs a small fraction of walking it with libdbus's iterator.
///
/// Pure and bounded (no libdbus, every read checked by `DBusWireCursor`), so arbitrary bytes are declined, never
/// trusted: the fuzz target `dbus-properties` compares what it reads with libdbus's own reading of the same bytes.
package enum DBusPropertiesChangedBody {
    private static let signatureField: UInt8 = 8

    /// Hands each changed property of the marshalled message `bytes` to `visit`, in order. False when the message
    /// is not `PropertiesChanged(interface, a{sv}, [])` with exactly the body signature `sa{sv}as`, when a property
    /// list of invalidated names is not empty, when anything is out of bounds, or when `visit` declines a property
    /// or leaves its value unread.
    package static func visit(
        _ bytes: UnsafeRawBufferPointer, ofInterface interface: String,
        _ visit: (DBusPropertyName, inout DBusVariantReader) -> Bool
    ) -> Bool {
        guard var cursor = DBusWireCursor(message: bytes), let bodyStart = bodyStart(&cursor) else { return false }
        return visitBody(&cursor, at: bodyStart, ofInterface: interface, visit)
    }

    /// `visit(_:ofInterface:_:)` of a message's body alone (`DBusSignalMessage.withBodyInPlace`), in the byte order
    /// given: the body must be exactly `sa{sv}as`'s arguments, still read within bounds at every step.
    package static func visit(
        body bytes: UnsafeRawBufferPointer, bigEndian: Bool, ofInterface interface: String,
        _ visit: (DBusPropertyName, inout DBusVariantReader) -> Bool
    ) -> Bool {
        var cursor = DBusWireCursor(body: bytes, bigEndian: bigEndian)
        return visitBody(&cursor, at: 0, ofInterface: interface, visit)
    }

    private static func visitBody(
        _ cursor: inout DBusWireCursor, at bodyStart: Int, ofInterface interface: String,
        _ visit: (DBusPropertyName, inout DBusVariantReader) -> Bool
    ) -> Bool {
        guard cursor.seek(to: bodyStart), let name = cursor.string(), DBusWireCursor.equal(name, interface),
            let entriesEnd = cursor.enterArray(elementAlignment: 8)
        else { return false }
        let outer = cursor.narrow(to: entriesEnd)
        while cursor.offset < entriesEnd {
            guard cursor.align(8), let property = cursor.string() else { return false }
            var reader = DBusVariantReader(cursor: cursor)
            guard visit(DBusPropertyName(bytes: property), &reader),
                reader.consumed
            else { return false }
            cursor = reader.cursor
        }
        cursor.restore(end: outer)
        // Then an empty list of invalidated properties, and nothing after it.
        guard let invalidatedEnd = cursor.enterArray(elementAlignment: 4), invalidatedEnd == cursor.offset else {
            return false
        }
        return cursor.atEnd
    }

    /// Reads the fixed header and the header fields: the offset where the body starts, when the message is
    /// version 1, its body fills the rest of the bytes exactly, and its signature field is `sa{sv}as`. A header
    /// field of a type the header never uses declines the message.
    private static func bodyStart(_ cursor: inout DBusWireCursor) -> Int? {
        // Byte order, message type, flags, protocol version.
        guard cursor.byte() != nil, cursor.byte() != nil, cursor.byte() != nil, cursor.byte() == 1,
            let bodyLength = cursor.uint32(), cursor.uint32() != nil,
            let fieldsEnd = cursor.enterArray(elementAlignment: 8)
        else { return nil }
        let outer = cursor.narrow(to: fieldsEnd)
        var signatureMatches = false
        while cursor.offset < fieldsEnd {
            guard cursor.align(8), let code = cursor.byte(), let type = cursor.signature(), type.count == 1 else {
                return nil
            }
            switch type[0] {
            case UInt8(ascii: "s"), UInt8(ascii: "o"):
                guard cursor.string() != nil else { return nil }
            case UInt8(ascii: "u"):
                guard cursor.uint32() != nil else { return nil }
            case UInt8(ascii: "g"):
                guard let signature = cursor.signature() else { return nil }
                if code == signatureField { signatureMatches = DBusWireCursor.equal(signature, "sa{sv}as") }
            default:
                return nil
            }
        }
        cursor.restore(end: outer)
        guard signatureMatches, cursor.align(8), cursor.end - cursor.offset == Int(bodyLength) else { return nil }
        return cursor.offset
    }
}
