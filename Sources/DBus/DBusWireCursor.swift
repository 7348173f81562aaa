import Glibc

/// A bounded reader of the D-Bus wire format over one marshalled message, for hot paths that read a few fields of a
/// message of known shape faster than libdbus's iterator can walk it (that iterator re-reads the signature for
/// every value it visits).
///
/// Every read checks the bounds first and returns nil past them, so arbitrary bytes can be read without a trap.
/// Offsets count from the start of the message, as the format's alignment does. The bytes must outlive the cursor.
struct DBusWireCursor {
    private let bytes: UnsafeRawBufferPointer
    private let bigEndian: Bool
    /// Where the next read starts, and where the current container ends (nothing is read at or past it).
    private(set) var offset: Int
    private(set) var end: Int

    /// A cursor over a whole marshalled message, at its start: nil when it does not start with a byte order mark.
    init?(message bytes: UnsafeRawBufferPointer) {
        guard let mark = bytes.first, mark == UInt8(ascii: "l") || mark == UInt8(ascii: "B") else { return nil }
        self.bytes = bytes
        bigEndian = mark == UInt8(ascii: "B")
        offset = 0
        end = bytes.count
    }

    /// A cursor over a message's body alone, at its start. The body starts at a multiple of 8 in its message, so
    /// offsets from it align as the message's do.
    init(body bytes: UnsafeRawBufferPointer, bigEndian: Bool) {
        self.bytes = bytes
        self.bigEndian = bigEndian
        offset = 0
        end = bytes.count
    }

    /// Whether everything up to the end of the current container was read.
    var atEnd: Bool { offset == end }

    /// Skips the padding up to the next multiple of `alignment` (a power of two).
    mutating func align(_ alignment: Int) -> Bool {
        let aligned = (offset + alignment - 1) & ~(alignment - 1)
        guard aligned <= end else { return false }
        offset = aligned
        return true
    }

    /// Moves to `offset`, which must lie between here and the container's end.
    mutating func seek(to target: Int) -> Bool {
        guard target >= offset, target <= end else { return false }
        offset = target
        return true
    }

    mutating func byte() -> UInt8? {
        guard offset < end else { return nil }
        defer { offset += 1 }
        return bytes[offset]
    }

    mutating func uint16() -> UInt16? {
        guard align(2), end - offset >= 2 else { return nil }
        let raw = bytes.loadUnaligned(fromByteOffset: offset, as: UInt16.self)
        offset += 2
        return bigEndian ? UInt16(bigEndian: raw) : UInt16(littleEndian: raw)
    }

    mutating func uint32() -> UInt32? {
        guard align(4), end - offset >= 4 else { return nil }
        let raw = bytes.loadUnaligned(fromByteOffset: offset, as: UInt32.self)
        offset += 4
        return bigEndian ? UInt32(bigEndian: raw) : UInt32(littleEndian: raw)
    }

    /// A string or object path (`s`, `o`): a 32-bit length, the bytes and a NUL. Returns the bytes, NUL left out;
    /// the NUL itself is checked, so the bytes can also be read as a C string.
    mutating func string() -> UnsafeRawBufferPointer? {
        guard let length = uint32() else { return nil }
        return terminated(Int(length))
    }

    /// A signature (`g`): an 8-bit length, the bytes and a NUL.
    mutating func signature() -> UnsafeRawBufferPointer? {
        guard let length = byte() else { return nil }
        return terminated(Int(length))
    }

    /// Whether a signature follows that is exactly `expected` (the type of a variant's value, say).
    mutating func signature(is expected: StaticString) -> Bool {
        guard let found = signature() else { return false }
        return Self.equal(found, expected)
    }

    /// An array: its 32-bit length in bytes, then the padding to its first element. Returns the offset where the
    /// array ends; the caller reads elements while `offset` is below it and then calls `leave(array:)`.
    mutating func enterArray(elementAlignment: Int) -> Int? {
        guard let length = uint32(), align(elementAlignment) else { return nil }
        // The format caps arrays at 64 MiB; the container's end caps them harder.
        guard Int(length) <= end - offset else { return nil }
        return offset + Int(length)
    }

    /// Reads the rest of the current container only up to `limit` (an array's end), until `restore(end:)`.
    mutating func narrow(to limit: Int) -> Int {
        let outer = end
        end = limit
        return outer
    }

    mutating func restore(end outer: Int) {
        end = outer
    }

    /// The bytes of a byte array (`ay`) in place.
    mutating func byteArray(maxCount: Int) -> UnsafeRawBufferPointer? {
        guard let arrayEnd = enterArray(elementAlignment: 1), arrayEnd - offset <= maxCount else { return nil }
        let start = offset
        offset = arrayEnd
        return UnsafeRawBufferPointer(rebasing: bytes[start..<arrayEnd])
    }

    private mutating func terminated(_ length: Int) -> UnsafeRawBufferPointer? {
        guard length < end - offset, bytes[offset + length] == 0 else { return nil }
        let start = offset
        offset += length + 1
        return UnsafeRawBufferPointer(rebasing: bytes[start..<start + length])
    }

    static func equal(_ bytes: UnsafeRawBufferPointer, _ expected: StaticString) -> Bool {
        expected.withUTF8Buffer { equal(bytes, UnsafeRawBufferPointer($0)) }
    }

    /// Whether the bytes are those of `expected`'s UTF-8.
    static func equal(_ bytes: UnsafeRawBufferPointer, _ expected: String) -> Bool {
        var expected = expected
        return expected.withUTF8 { equal(bytes, UnsafeRawBufferPointer($0)) }
    }

    /// Whether the bytes are those of `expected`.
    static func equal(_ bytes: UnsafeRawBufferPointer, _ expected: [UInt8]) -> Bool {
        expected.withUnsafeBytes { equal(bytes, $0) }
    }

    private static func equal(_ a: UnsafeRawBufferPointer, _ b: UnsafeRawBufferPointer) -> Bool {
        a.count == b.count && (a.isEmpty || memcmp(a.baseAddress!, b.baseAddress!, a.count) == 0)
    }
}
