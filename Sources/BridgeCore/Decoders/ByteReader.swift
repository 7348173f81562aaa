/// A cursor over hostile bytes: every read checks the remaining length and throws ``DecoderError`` `.truncated`
/// instead of trapping.
struct ByteReader {
    /// The bytes read; `offset` counts from their start, whatever the slice's own indices.
    private let bytes: ArraySlice<UInt8>
    private(set) var offset: Int
    private let context: String

    init(_ bytes: [UInt8], context: String) {
        self.init(bytes[...], context: context)
    }

    /// A reader of a slice, read where it lies (an object of a packet, say).
    init(_ bytes: ArraySlice<UInt8>, context: String) {
        self.bytes = bytes
        self.offset = 0
        self.context = context
    }

    var remaining: Int { bytes.count - offset }
    var isAtEnd: Bool { offset >= bytes.count }

    /// Checks that `count` bytes remain and moves past them; returns where they start, as an index of `bytes`.
    /// Field names are built only for an error: a name such as "object 0x1004" made on every read was a formatted
    /// string per object.
    private mutating func take(_ count: Int, for field: @autoclosure () -> String) throws(DecoderError) -> Int {
        guard count >= 0, count <= remaining else {
            throw DecoderError(.truncated, "\(context): \(field()) needs \(count) bytes, \(max(remaining, 0)) left")
        }
        defer { offset += count }
        return bytes.startIndex + offset
    }

    mutating func bytes(_ count: Int, for field: @autoclosure () -> String) throws(DecoderError) -> [UInt8] {
        Array(try slice(count, for: field()))
    }

    /// The next `count` bytes where they lie, without a copy.
    mutating func slice(_ count: Int, for field: @autoclosure () -> String) throws(DecoderError) -> ArraySlice<UInt8> {
        let start = try take(count, for: field())
        return bytes[start..<start + count]
    }

    // The integer reads below index the bytes in place: a decoder reads a handful per advertisement, and a copy of
    // each into an array was an allocation apiece.

    mutating func uint8(_ field: String) throws(DecoderError) -> UInt8 { bytes[try take(1, for: field)] }

    mutating func skip(_ count: Int, _ field: String) throws(DecoderError) { _ = try take(count, for: field) }

    /// An unsigned little-endian integer of 1 to 4 bytes.
    mutating func uintLE(_ width: Int, _ field: String) throws(DecoderError) -> UInt32 {
        let start = try take(width, for: field)
        return LittleEndian.unsigned(bytes[start..<start + width])
    }

    /// A two's complement little-endian integer of 1 to 4 bytes.
    mutating func intLE(_ width: Int, _ field: String) throws(DecoderError) -> Int32 {
        let start = try take(width, for: field)
        return LittleEndian.signed(bytes[start..<start + width])
    }

    /// An unsigned big-endian integer of 1 to 4 bytes.
    mutating func uintBE(_ width: Int, _ field: String) throws(DecoderError) -> UInt32 {
        bigEndian(at: try take(width, for: field), width)
    }

    /// A two's complement big-endian integer of 1 to 4 bytes.
    mutating func intBE(_ width: Int, _ field: String) throws(DecoderError) -> Int32 {
        let start = try take(width, for: field)
        return LittleEndian.signExtended(bigEndian(at: start, width), width: min(width, 4))
    }

    /// The last four (at most) of the `width` bytes at `start`, the first of them most significant. Read by index:
    /// through a reversed slice each read retained and released the bytes and went through the generic collection.
    private func bigEndian(at start: Int, _ width: Int) -> UInt32 {
        var value: UInt32 = 0
        for index in start + width - min(width, 4)..<start + width { value = value << 8 | UInt32(bytes[index]) }
        return value
    }
}

/// Integer assembly for 1 to 4 bytes, least significant first.
enum LittleEndian {
    static func unsigned(_ bytes: some Collection<UInt8>) -> UInt32 {
        var value: UInt32 = 0
        for (index, byte) in bytes.prefix(4).enumerated() { value |= UInt32(byte) << (8 * UInt32(index)) }
        return value
    }

    static func signed(_ bytes: some Collection<UInt8>) -> Int32 {
        signExtended(unsigned(bytes), width: min(bytes.count, 4))
    }

    /// `raw`, an integer of `width` bytes (0 to 4), read as two's complement.
    static func signExtended(_ raw: UInt32, width: Int) -> Int32 {
        guard width > 0 else { return 0 }
        let shift = UInt32(32 - 8 * width)
        return Int32(bitPattern: raw << shift) >> Int32(shift)
    }
}
