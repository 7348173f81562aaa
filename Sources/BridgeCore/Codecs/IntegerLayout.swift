/// The layout of a fixed-width integer field: width, signedness and byte order.
package struct IntegerLayout: Hashable, Sendable {
    /// Width in bits: 8, 16, 24, 32 or 64.
    package let bits: Int
    /// Two's-complement signed when true.
    package let isSigned: Bool
    /// Least significant byte first when true.
    package let isLittleEndian: Bool

    /// Creates a layout; `bits` must be one of 8, 16, 24, 32, 64.
    package init?(bits: Int, isSigned: Bool, isLittleEndian: Bool) {
        guard [8, 16, 24, 32, 64].contains(bits) else { return nil }
        self.bits = bits
        self.isSigned = isSigned
        self.isLittleEndian = isLittleEndian
    }

    /// Width in bytes.
    package var byteCount: Int { bits / 8 }

    /// The smallest representable value.
    package var minimum: Int64 { isSigned ? (bits == 64 ? Int64.min : -(Int64(1) << (bits - 1))) : 0 }

    /// The largest representable value, as an unsigned number so that `uint64` fits.
    package var maximum: UInt64 {
        if bits == 64 { return isSigned ? UInt64(Int64.max) : UInt64.max }
        return isSigned ? (UInt64(1) << (bits - 1)) - 1 : (UInt64(1) << bits) - 1
    }

    /// Reads the field from exactly ``byteCount`` bytes.
    func read(_ bytes: ArraySlice<UInt8>) -> IntegerValue {
        var raw: UInt64 = 0
        if isLittleEndian {
            for byte in bytes.reversed() { raw = raw << 8 | UInt64(byte) }
        } else {
            for byte in bytes { raw = raw << 8 | UInt64(byte) }
        }
        guard isSigned else { return .unsigned(raw) }
        let shift = UInt64(64 - bits)
        return .signed(Int64(bitPattern: raw << shift) >> Int64(shift))
    }

    /// Writes a value already checked to be in range.
    func write(bitPattern: UInt64) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: byteCount)
        for index in 0..<byteCount {
            let byte = UInt8(truncatingIfNeeded: bitPattern >> UInt64(8 * index))
            out[isLittleEndian ? index : byteCount - 1 - index] = byte
        }
        return out
    }

    /// The short name used in configuration: `uint16le`, `int8`, ...
    package var name: String {
        (isSigned ? "int" : "uint") + String(bits) + (bits == 8 ? "" : (isLittleEndian ? "le" : "be"))
    }
}

/// A decoded integer field, kept exact for the full 64-bit range.
enum IntegerValue: Equatable {
    case signed(Int64)
    case unsigned(UInt64)
}
