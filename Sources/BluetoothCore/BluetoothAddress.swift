/// A 48-bit Bluetooth device address (BD_ADDR), such as `C4:7C:8D:6A:3E:11`.
///
/// Parsed case-insensitively from the colon form or from the BlueZ object path form
/// (`/org/bluez/hci0/dev_C4_7C_8D_6A_3E_11` or just `dev_C4_7C_8D_6A_3E_11`); always printed in the
/// canonical upper-case colon form.
package struct BluetoothAddress: Hashable, Sendable, Comparable, CustomStringConvertible {
    /// The 48 bits, the first byte as written the most significant. Held inline, not as an array of bytes: an
    /// address is copied, hashed and compared for every advertisement (the device's facts, the replay tables, the
    /// keyring), and an array was a reference counted, hashed and compared byte by byte each time.
    @usableFromInline let value: UInt64

    /// The number of bytes in an address.
    package static let byteCount = 6

    /// Creates an address from six bytes, most significant first.
    package init?(bytes: [UInt8]) {
        guard bytes.count == Self.byteCount else { return nil }
        value = bytes.reduce(0) { $0 << 8 | UInt64($1) }
    }

    /// The six address bytes, most significant first (as written). An array made for each call: a hot path reads
    /// `byte(_:)`.
    package var bytes: [UInt8] { (0..<Self.byteCount).map(byte) }

    /// The address byte at `index` (0 to 5), most significant first.
    @inlinable
    package func byte(_ index: Int) -> UInt8 {
        UInt8(truncatingIfNeeded: value >> UInt64(8 * (Self.byteCount - 1 - index)))
    }

    /// Parses `C4:7C:8D:6A:3E:11` (any case), `C4-7C-…`, or the BlueZ `dev_C4_7C_…` path form.
    package init(parsing text: String) throws(BluetoothValueError) {
        var utf8 = Array(text.utf8)
        if let start = Self.indexAfterLastDevicePrefix(in: utf8) {
            utf8.removeSubrange(..<start)
        }
        guard utf8.count == 17 else { throw BluetoothValueError("\"\(text)\" is not a Bluetooth address") }
        var result: UInt64 = 0
        for index in 0..<6 {
            let offset = index * 3
            if index > 0 {
                let separator = utf8[offset - 1]
                guard
                    separator == UInt8(ascii: ":") || separator == UInt8(ascii: "_")
                        || separator == UInt8(ascii: "-")
                else { throw BluetoothValueError("\"\(text)\" is not a Bluetooth address") }
            }
            guard let high = Hex.value(of: utf8[offset]), let low = Hex.value(of: utf8[offset + 1]) else {
                throw BluetoothValueError("\"\(text)\" is not a Bluetooth address")
            }
            result = result << 8 | UInt64(high << 4 | low)
        }
        value = result
    }

    /// Parses like ``init(parsing:)`` but returns nil instead of an error.
    package init?(_ text: String) {
        guard let parsed = try? BluetoothAddress(parsing: text) else { return nil }
        self = parsed
    }

    /// Canonical form: upper-case hex pairs separated by colons.
    package var description: String { formatted(separator: UInt8(ascii: ":")) }

    /// The address as 12 lower-case hex digits, used as a device's topic name when none is configured.
    package var topicName: String {
        var out: [UInt8] = []
        out.reserveCapacity(12)
        for index in 0..<Self.byteCount {
            out.append(Hex.digit(byte(index) >> 4))
            out.append(Hex.digit(byte(index)))
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// The path component BlueZ uses for a device object: `dev_C4_7C_8D_6A_3E_11`.
    package var bluezPathComponent: String {
        "dev_" + formatted(separator: UInt8(ascii: "_"))
    }

    /// True for a random static address (the two most significant bits are 11).
    ///
    /// Only meaningful when the address type is ``BluetoothAddressType/random``.
    package var isRandomStatic: Bool { byte(0) & 0xC0 == 0xC0 }

    /// True for a resolvable private address (the two most significant bits are 01).
    package var isResolvablePrivate: Bool { byte(0) & 0xC0 == 0x40 }

    package static func < (lhs: BluetoothAddress, rhs: BluetoothAddress) -> Bool {
        lhs.value < rhs.value
    }

    /// Where the address starts in a BlueZ path (`…/dev_XX_…`), or nil when there is no `dev_` prefix.
    private static func indexAfterLastDevicePrefix(in utf8: [UInt8]) -> Int? {
        let prefix = Array("dev_".utf8)
        guard utf8.count >= prefix.count else { return nil }
        var index = utf8.count - prefix.count
        while index >= 0 {
            if utf8[index..<index + prefix.count].elementsEqual(prefix) { return index + prefix.count }
            index -= 1
        }
        return nil
    }

    /// How long the address's text is: hex pairs with a separator between each two.
    package var textLength: Int { Self.byteCount * 3 - 1 }

    /// Writes the upper-case hex pairs, `separator` between each two, to the start of `buffer` (at least
    /// ``textLength`` long) and returns how many bytes it wrote. The one formatter of an address: `description` and
    /// the BlueZ path component write it into a string's storage, advert JSON into its own buffer, once per
    /// advertisement.
    @inlinable
    package func write(separator: UInt8, into buffer: UnsafeMutableBufferPointer<UInt8>) -> Int {
        var position = 0
        for index in 0..<Self.byteCount {
            if index > 0 {
                buffer[position] = separator
                position += 1
            }
            let byte = byte(index)
            buffer[position] = Hex.digit(byte >> 4, uppercase: true)
            buffer[position + 1] = Hex.digit(byte, uppercase: true)
            position += 2
        }
        return position
    }

    private func formatted(separator: UInt8) -> String {
        String(unsafeUninitializedCapacity: textLength) { write(separator: separator, into: $0) }
    }
}

/// Whether an LE address is the device's public (IEEE-assigned) address or a random one.
///
/// BlueZ reports it in `Device1.AddressType` as `"public"` or `"random"`.
package enum BluetoothAddressType: String, Sendable, Hashable, CaseIterable {
    case `public`
    case random
}
