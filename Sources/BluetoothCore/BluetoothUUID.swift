/// A Bluetooth UUID, stored normalised to its 128-bit value.
///
/// 16- and 32-bit forms are expanded with the Bluetooth Base UUID
/// `0000xxxx-0000-1000-8000-00805F9B34FB`, so
/// `BluetoothUUID("180D") == BluetoothUUID("0000180d-0000-1000-8000-00805f9b34fb")`.
///
/// - SeeAlso: Bluetooth Core Specification, Vol 3, Part B, §2.5.1 "UUID".
package struct BluetoothUUID: Hashable, Sendable, CustomStringConvertible {
    /// The most significant 64 bits.
    package let high: UInt64
    /// The least significant 64 bits.
    package let low: UInt64

    /// The low 96 bits of the Bluetooth Base UUID: `xxxxxxxx-0000-1000-8000-00805F9B34FB`.
    static let baseHighLow32: UInt64 = 0x0000_1000
    static let baseLow: UInt64 = 0x8000_0080_5F9B_34FB

    /// Creates a UUID from its two 64-bit halves.
    package init(high: UInt64, low: UInt64) {
        self.high = high
        self.low = low
    }

    /// Expands a 16-bit UUID with the Bluetooth Base UUID.
    package init(uuid16: UInt16) {
        self.init(uuid32: UInt32(uuid16))
    }

    /// Expands a 32-bit UUID with the Bluetooth Base UUID.
    package init(uuid32: UInt32) {
        self.init(high: UInt64(uuid32) << 32 | Self.baseHighLow32, low: Self.baseLow)
    }

    /// Parses a 16-bit (`180D`), 32-bit (`0000180D`) or 128-bit (`0000180d-0000-1000-8000-00805f9b34fb`) UUID,
    /// case-insensitively. A `0x` prefix is accepted on the short forms.
    package init(parsing text: String) throws(BluetoothValueError) {
        var utf8Text = text
        guard let parsed = utf8Text.withUTF8({ Self.parse($0) }) else { throw Self.notAUUID(text) }
        if parsed.digits == 32 {
            self.init(high: parsed.high, low: parsed.low)
        } else {
            self.init(uuid32: UInt32(truncatingIfNeeded: parsed.low))
        }
    }

    /// The digits of a UUID's text, read in place: every advertisement with service data names its UUIDs as text,
    /// so this runs per advertisement, where copying the text into arrays cost more than the parse.
    private static func parse(_ utf8: UnsafeBufferPointer<UInt8>) -> (high: UInt64, low: UInt64, digits: Int)? {
        var start = 0
        if utf8.count == 6 || utf8.count == 10, utf8[0] == UInt8(ascii: "0"),
            utf8[1] == UInt8(ascii: "x") || utf8[1] == UInt8(ascii: "X")
        {
            start = 2
        }
        let length = utf8.count - start
        let dashed = length == 36
        guard length == 4 || length == 8 || length == 32 || dashed else { return nil }
        let full = length == 32 || dashed
        var high: UInt64 = 0
        var low: UInt64 = 0
        var digits = 0
        for position in 0..<length {
            let byte = utf8[start + position]
            if dashed, position == 8 || position == 13 || position == 18 || position == 23 {
                guard byte == UInt8(ascii: "-") else { return nil }
                continue
            }
            guard let value = Hex.value(of: byte) else { return nil }
            if full && digits < 16 {
                high = high << 4 | UInt64(value)
            } else {
                low = low << 4 | UInt64(value)
            }
            digits += 1
        }
        return (high, low, digits)
    }

    /// Parses like ``init(parsing:)`` but returns nil instead of an error.
    package init?(_ text: String) {
        guard let parsed = try? BluetoothUUID(parsing: text) else { return nil }
        self = parsed
    }

    private static func notAUUID(_ text: String) -> BluetoothValueError {
        BluetoothValueError("\"\(text)\" is not a Bluetooth UUID")
    }

    /// True when the UUID lies in the Bluetooth Base UUID range (it has a 16- or 32-bit alias).
    package var isInBaseRange: Bool { low == Self.baseLow && high & 0xFFFF_FFFF == Self.baseHighLow32 }

    /// The 32-bit alias, when the UUID is in the base range.
    package var uuid32: UInt32? { isInBaseRange ? UInt32(truncatingIfNeeded: high >> 32) : nil }

    /// The 16-bit alias, when the UUID is in the base range and its alias fits in 16 bits.
    package var uuid16: UInt16? {
        guard let value = uuid32, value <= UInt32(UInt16.max) else { return nil }
        return UInt16(value)
    }

    /// How many bytes the UUID takes on air in its shortest form: 2, 4 or 16.
    package var byteWidth: Int {
        if uuid16 != nil { return 2 }
        if uuid32 != nil { return 4 }
        return 16
    }

    /// The shortest text form: 4 or 8 lower-case hex digits in the base range, else nil.
    package var shortForm: String? {
        if let value = uuid16 { return Self.hex(UInt64(value), digits: 4) }
        if let value = uuid32 { return Self.hex(UInt64(value), digits: 8) }
        return nil
    }

    /// The short form when there is one, else the full 128-bit form.
    package var shortestForm: String { shortForm ?? description }

    /// The normalised 128-bit form: lower-case, with dashes (the form BlueZ uses on D-Bus).
    package var description: String {
        let hexHigh = Self.hex(high, digits: 16)
        let hexLow = Self.hex(low, digits: 16)
        let a = hexHigh.utf8.prefix(8)
        let b = hexHigh.utf8.dropFirst(8).prefix(4)
        let c = hexHigh.utf8.suffix(4)
        let d = hexLow.utf8.prefix(4)
        let e = hexLow.utf8.suffix(12)
        var out: [UInt8] = []
        out.reserveCapacity(36)
        out += a
        out.append(UInt8(ascii: "-"))
        out += b
        out.append(UInt8(ascii: "-"))
        out += c
        out.append(UInt8(ascii: "-"))
        out += d
        out.append(UInt8(ascii: "-"))
        out += e
        return String(decoding: out, as: UTF8.self)
    }

    /// The 16 bytes in little-endian order, as they appear in advertising data and ATT PDUs.
    package var littleEndianBytes: [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(16)
        for shift in stride(from: 0, to: 64, by: 8) { out.append(UInt8(truncatingIfNeeded: low >> UInt64(shift))) }
        for shift in stride(from: 0, to: 64, by: 8) { out.append(UInt8(truncatingIfNeeded: high >> UInt64(shift))) }
        return out
    }

    private static func hex(_ value: UInt64, digits: Int) -> String { Hex.padded(value, digits: digits) }
}
