/// Where one message ends in a stream of the D-Bus wire format, read from its 16-byte fixed header alone: what the
/// relay needs to cut the bus's stream into messages without reading them (see `DBusWireRelay`).
///
/// Pure and bounded: a header that cannot start a message (a bad byte order mark, message type or version, a length
/// over the format's limits) is refused, so the stream is given up rather than read out of step.
enum DBusWireFrame {
    /// The format's limit on a whole message (2²⁷ bytes) and on one array, the header fields' included (2²⁶).
    static let maxMessageLength = 1 << 27
    static let maxArrayLength = 1 << 26
    static let fixedHeaderLength = 16

    enum Length: Equatable {
        /// Fewer than 16 bytes so far.
        case needMore
        /// The whole message's length, header, padding and body.
        case message(Int)
        /// The bytes cannot start a message: why.
        case invalid(String)
    }

    /// The length of the message at the start of `bytes`.
    static func length(of bytes: UnsafeRawBufferPointer) -> Length {
        guard bytes.count >= fixedHeaderLength else { return .needMore }
        let bigEndian: Bool
        switch bytes[0] {
        case UInt8(ascii: "l"): bigEndian = false
        case UInt8(ascii: "B"): bigEndian = true
        default: return .invalid("byte order mark \(bytes[0])")
        }
        // Types other than the four are to be ignored, not refused (libdbus reads them, and so the relay hands them on).
        guard bytes[1] != 0 else { return .invalid("message type 0") }
        guard bytes[3] == 1 else { return .invalid("protocol version \(bytes[3])") }
        func uint32(at offset: Int) -> Int {
            let raw = bytes.loadUnaligned(fromByteOffset: offset, as: UInt32.self)
            return Int(bigEndian ? UInt32(bigEndian: raw) : UInt32(littleEndian: raw))
        }
        let bodyLength = uint32(at: 4)
        let fieldsLength = uint32(at: 12)
        guard uint32(at: 8) != 0 else { return .invalid("serial 0") }
        guard fieldsLength <= maxArrayLength else { return .invalid("header fields of \(fieldsLength) bytes") }
        let headerLength = (fixedHeaderLength + fieldsLength + 7) & ~7
        let total = headerLength + bodyLength
        guard bodyLength <= maxMessageLength, total <= maxMessageLength else {
            return .invalid("a message of \(total) bytes")
        }
        return .message(total)
    }
}

/// The header of one whole message read in place: its type, serial and the header fields a signal is matched by,
/// as C strings into the message's bytes (valid while they are). Made only of messages whose header holds nothing
/// but the fields the specification defines, each of its defined type; anything else is nil, and the relay hands
/// such a message to libdbus, which reads every kind.
struct DBusWireHeader {
    static let signal = UInt8(DBusMessageKind.signal)

    let type: UInt8
    let bigEndian: Bool
    let serial: UInt32
    var path: UnsafePointer<CChar>?
    var interface: UnsafePointer<CChar>?
    var member: UnsafePointer<CChar>?
    var sender: UnsafePointer<CChar>?
    /// The body's signature; empty when the header has none (a body of nothing).
    var signature: UnsafeRawBufferPointer = UnsafeRawBufferPointer(start: nil, count: 0)
    var unixFDs: UInt32 = 0
    /// Where the body starts in the message, and the body.
    var bodyStart = 0
    var body = UnsafeRawBufferPointer(start: nil, count: 0)

    /// The header of the whole message `bytes` (exactly one message, as `DBusWireFrame.length` cut it).
    init?(message bytes: UnsafeRawBufferPointer) {
        guard bytes.count >= DBusWireFrame.fixedHeaderLength, var cursor = DBusWireCursor(message: bytes),
            let order = cursor.byte(), let type = cursor.byte(), cursor.byte() != nil, cursor.byte() == 1,
            let bodyLength = cursor.uint32(), let serial = cursor.uint32(),
            let fieldsEnd = cursor.enterArray(elementAlignment: 8)
        else { return nil }
        self.type = type
        bigEndian = order == UInt8(ascii: "B")
        self.serial = serial
        let outer = cursor.narrow(to: fieldsEnd)
        // A field given twice makes the message invalid (libdbus refuses it; the bus never sends one).
        var seen: UInt16 = 0
        while cursor.offset < fieldsEnd {
            guard cursor.align(8), let code = cursor.byte(), let fieldType = cursor.signature(), fieldType.count == 1,
                code < 16, seen & (1 << code) == 0
            else { return nil }
            seen |= 1 << code
            switch (code, fieldType[0]) {
            case (1, UInt8(ascii: "o")): path = Self.cString(cursor.string())
            case (2, UInt8(ascii: "s")): interface = Self.cString(cursor.string())
            case (3, UInt8(ascii: "s")): member = Self.cString(cursor.string())
            case (4, UInt8(ascii: "s")), (6, UInt8(ascii: "s")):
                guard cursor.string() != nil else { return nil }
            case (5, UInt8(ascii: "u")):
                guard cursor.uint32() != nil else { return nil }
            case (7, UInt8(ascii: "s")): sender = Self.cString(cursor.string())
            case (8, UInt8(ascii: "g")):
                guard let found = cursor.signature() else { return nil }
                signature = found
            case (9, UInt8(ascii: "u")):
                guard let count = cursor.uint32() else { return nil }
                unixFDs = count
            default:
                return nil
            }
            // A string field that did not read left its pointer nil: the message is refused below.
            if (code == 1 && path == nil) || (code == 2 && interface == nil) || (code == 3 && member == nil)
                || (code == 7 && sender == nil)
            {
                return nil
            }
        }
        cursor.restore(end: outer)
        guard cursor.align(8), cursor.end - cursor.offset == Int(bodyLength) else { return nil }
        bodyStart = cursor.offset
        body = UnsafeRawBufferPointer(rebasing: bytes[bodyStart...])
    }

    /// Whether the body's signature is exactly `expected`.
    func hasSignature(_ expected: StaticString) -> Bool {
        DBusWireCursor.equal(signature, expected)
    }

    /// The first argument when it is a string (what a match rule's `arg0` compares), as a C string.
    var firstString: UnsafePointer<CChar>? {
        guard signature.first == UInt8(ascii: "s") else { return nil }
        var cursor = DBusWireCursor(body: body, bigEndian: bigEndian)
        return Self.cString(cursor.string())
    }

    /// The characters of a string the cursor read, whose NUL it checked.
    private static func cString(_ bytes: UnsafeRawBufferPointer?) -> UnsafePointer<CChar>? {
        guard let bytes else { return nil }
        // An empty string's buffer may have no base address of its own; its NUL follows its length field.
        guard let base = bytes.baseAddress else { return nil }
        return base.assumingMemoryBound(to: CChar.self)
    }
}
