/// Hex text for byte strings: lower-case out, tolerant in (case, whitespace, `:` separators, `0x` prefix).
package enum Hex {
    private static let digits: [UInt8] = Array("0123456789abcdef".utf8)

    /// Lower-case hex digits, two per byte.
    package static func encode(_ bytes: [UInt8]) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count * 2)
        for byte in bytes {
            out.append(digits[Int(byte >> 4)])
            out.append(digits[Int(byte & 0x0F)])
        }
        return out
    }

    /// Lower-case hex as a string.
    package static func string(_ bytes: [UInt8]) -> String { String(decoding: encode(bytes), as: UTF8.self) }

    private static func value(of byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }

    /// Parses hex text; nil when a character is not a hex digit or the digit count is odd.
    package static func decode(_ text: some Collection<UInt8>) -> [UInt8]? {
        var body = Array(text)[...]
        while let first = body.first, first == 0x20 || first == 0x0A || first == 0x0D || first == 0x09 {
            body = body.dropFirst()
        }
        if body.count >= 2, body[body.startIndex] == UInt8(ascii: "0"),
            body[body.startIndex + 1] | 0x20 == UInt8(ascii: "x")
        {
            body = body.dropFirst(2)
        }
        var out: [UInt8] = []
        out.reserveCapacity(body.count / 2)
        var pending: UInt8?
        for byte in body {
            if byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09 || byte == UInt8(ascii: ":") {
                guard pending == nil else { return nil }
                continue
            }
            guard let nibble = value(of: byte) else { return nil }
            if let high = pending {
                out.append(high << 4 | nibble)
                pending = nil
            } else {
                pending = nibble
            }
        }
        return pending == nil ? out : nil
    }
}
