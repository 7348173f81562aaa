/// A cursor over hostile bytes: every read checks the remaining length and throws ``DecoderError`` `.truncated`
/// instead of trapping.
struct ByteReader {
    private let bytes: [UInt8]
    private(set) var offset: Int
    private let context: String

    init(_ bytes: [UInt8], context: String) {
        self.bytes = bytes
        self.offset = 0
        self.context = context
    }

    var remaining: Int { bytes.count - offset }
    var isAtEnd: Bool { offset >= bytes.count }

    mutating func bytes(_ count: Int, for field: String) throws(DecoderError) -> [UInt8] {
        guard count >= 0, count <= remaining else {
            throw DecoderError(.truncated, "\(context): \(field) needs \(count) bytes, \(max(remaining, 0)) left")
        }
        defer { offset += count }
        return Array(bytes[offset..<offset + count])
    }

    mutating func uint8(_ field: String) throws(DecoderError) -> UInt8 { try bytes(1, for: field)[0] }

    mutating func skip(_ count: Int, _ field: String) throws(DecoderError) { _ = try bytes(count, for: field) }

    /// An unsigned little-endian integer of 1 to 4 bytes.
    mutating func uintLE(_ width: Int, _ field: String) throws(DecoderError) -> UInt32 {
        LittleEndian.unsigned(try bytes(width, for: field))
    }

    /// A two's complement little-endian integer of 1 to 4 bytes.
    mutating func intLE(_ width: Int, _ field: String) throws(DecoderError) -> Int32 {
        LittleEndian.signed(try bytes(width, for: field))
    }

    mutating func uintBE(_ width: Int, _ field: String) throws(DecoderError) -> UInt32 {
        LittleEndian.unsigned(try bytes(width, for: field).reversed())
    }

    mutating func intBE(_ width: Int, _ field: String) throws(DecoderError) -> Int32 {
        LittleEndian.signed(try bytes(width, for: field).reversed())
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
        let width = min(bytes.count, 4)
        guard width > 0 else { return 0 }
        let raw = unsigned(bytes)
        let shift = UInt32(32 - 8 * width)
        return Int32(bitPattern: raw << shift) >> Int32(shift)
    }
}
