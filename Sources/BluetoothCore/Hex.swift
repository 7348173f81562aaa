/// Hex text, the one helper for every module: lower- or upper-case digits out, tolerant in (case, whitespace, `:`
/// separators, a `0x` prefix). Kept free of Foundation because parsers of radio bytes and the codecs use it.
public enum Hex {
    /// The hex digit of `nibble` (its low four bits), computed: a table in a global array cost its lazy
    /// initialiser's check and a bounds check per digit, some fifteen instructions, and every advertisement writes
    /// dozens of digits.
    @inlinable
    public static func digit(_ nibble: UInt8, uppercase: Bool = false) -> UInt8 {
        let value = nibble & 0x0F
        // 0xFF when the digit is a letter (value above 9), else 0: the step from '9' + 1 to 'A' (7) or 'a' (39).
        let letter = 0 &- ((9 &- value) >> 7)
        return value &+ UInt8(ascii: "0") &+ (letter & (uppercase ? 7 : 39))
    }

    /// The value of one ASCII hex digit, or nil for anything else.
    package static func value(of byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte &- UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte &- UInt8(ascii: "a") &+ 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte &- UInt8(ascii: "A") &+ 10
        default: nil
        }
    }

    /// Two hex digits per byte. Inlinable so that callers in other modules get it specialized for their collection:
    /// unspecialized, iterating `some Collection` allocated once per byte.
    @inlinable
    public static func encode(_ bytes: some Collection<UInt8>, uppercase: Bool = false) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count * 2)
        for byte in bytes {
            out.append(digit(byte >> 4, uppercase: uppercase))
            out.append(digit(byte, uppercase: uppercase))
        }
        return out
    }

    /// Two hex digits per byte, as a string. Public for the reason `encode` is: this toolchain does not specialize a
    /// `package` inlinable function in other modules of the package, and unspecialized it reaches `encode` generic.
    @inlinable
    public static func string(_ bytes: some Collection<UInt8>, uppercase: Bool = false) -> String {
        String(decoding: encode(bytes, uppercase: uppercase), as: UTF8.self)
    }

    /// `value` as exactly `digits` hex digits, zero-padded on the left (higher digits are cut).
    package static func padded(_ value: UInt64, digits: Int, uppercase: Bool = false) -> String {
        var out = [UInt8](repeating: UInt8(ascii: "0"), count: digits)
        var remaining = value
        for index in stride(from: digits - 1, through: 0, by: -1) {
            out[index] = digit(UInt8(truncatingIfNeeded: remaining), uppercase: uppercase)
            remaining >>= 4
        }
        return String(decoding: out, as: UTF8.self)
    }

    private static func isSpace(_ byte: UInt8) -> Bool { byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09 }

    /// Parses hex text; nil when a character is not a hex digit or the digit count is odd.
    package static func decode(_ text: some Collection<UInt8>) -> [UInt8]? {
        var body = Array(text)[...]
        while let first = body.first, isSpace(first) { body = body.dropFirst() }
        if body.count >= 2, body[body.startIndex] == UInt8(ascii: "0"),
            body[body.startIndex + 1] | 0x20 == UInt8(ascii: "x")
        {
            body = body.dropFirst(2)
        }
        var out: [UInt8] = []
        out.reserveCapacity(body.count / 2)
        var pending: UInt8?
        for byte in body {
            if isSpace(byte) || byte == UInt8(ascii: ":") {
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
