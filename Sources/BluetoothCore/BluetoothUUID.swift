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
        var digits: [UInt8] = []
        digits.reserveCapacity(32)
        var utf8 = Array(text.utf8)
        if utf8.count == 6 || utf8.count == 10, utf8[0] == UInt8(ascii: "0"),
            utf8[1] == UInt8(ascii: "x") || utf8[1] == UInt8(ascii: "X")
        {
            utf8.removeFirst(2)
        }
        switch utf8.count {
        case 4, 8, 32:
            for byte in utf8 {
                guard let value = Hex.value(of: byte) else { throw Self.notAUUID(text) }
                digits.append(value)
            }
        case 36:
            for (index, byte) in utf8.enumerated() {
                if index == 8 || index == 13 || index == 18 || index == 23 {
                    guard byte == UInt8(ascii: "-") else { throw Self.notAUUID(text) }
                    continue
                }
                guard let value = Hex.value(of: byte) else { throw Self.notAUUID(text) }
                digits.append(value)
            }
        default:
            throw Self.notAUUID(text)
        }
        var value: (UInt64, UInt64) = (0, 0)
        for (index, digit) in digits.enumerated() {
            if digits.count == 32 && index < 16 {
                value.0 = value.0 << 4 | UInt64(digit)
            } else {
                value.1 = value.1 << 4 | UInt64(digit)
            }
        }
        if digits.count == 32 {
            self.init(high: value.0, low: value.1)
        } else {
            self.init(uuid32: UInt32(truncatingIfNeeded: value.1))
        }
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
