/// Standard base64 (RFC 4648 §4, with padding), kept here so that the codec path needs no Foundation.
enum Base64 {
    private static let alphabet: [UInt8] = Array(
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)

    static func encode(_ bytes: [UInt8]) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity((bytes.count + 2) / 3 * 4)
        var index = 0
        while index < bytes.count {
            let b0 = bytes[index]
            let b1 = index + 1 < bytes.count ? bytes[index + 1] : 0
            let b2 = index + 2 < bytes.count ? bytes[index + 2] : 0
            out.append(alphabet[Int(b0 >> 2)])
            out.append(alphabet[Int((b0 & 0x03) << 4 | b1 >> 4)])
            out.append(index + 1 < bytes.count ? alphabet[Int((b1 & 0x0F) << 2 | b2 >> 6)] : UInt8(ascii: "="))
            out.append(index + 2 < bytes.count ? alphabet[Int(b2 & 0x3F)] : UInt8(ascii: "="))
            index += 3
        }
        return out
    }

    private static func value(of byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"): byte - UInt8(ascii: "A")
        case UInt8(ascii: "a")...UInt8(ascii: "z"): byte - UInt8(ascii: "a") + 26
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0") + 52
        case UInt8(ascii: "+"), UInt8(ascii: "-"): 62
        case UInt8(ascii: "/"), UInt8(ascii: "_"): 63
        default: nil
        }
    }

    /// Decodes standard or URL-safe base64; padding is optional, whitespace is ignored. Nil when malformed.
    static func decode(_ text: [UInt8]) -> [UInt8]? {
        var sextets: [UInt8] = []
        sextets.reserveCapacity(text.count)
        var padding = 0
        for byte in text {
            if byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\n") || byte == UInt8(ascii: "\r")
                || byte == UInt8(ascii: "\t")
            {
                continue
            }
            if byte == UInt8(ascii: "=") {
                padding += 1
                continue
            }
            guard padding == 0, let value = value(of: byte) else { return nil }
            sextets.append(value)
        }
        guard sextets.count % 4 != 1, padding <= 2 else { return nil }
        if padding > 0, (sextets.count + padding) % 4 != 0 { return nil }
        var out: [UInt8] = []
        out.reserveCapacity(sextets.count * 3 / 4)
        var index = 0
        while index < sextets.count {
            let chunk = sextets[index..<min(index + 4, sextets.count)]
            let s = Array(chunk) + [UInt8](repeating: 0, count: 4 - chunk.count)
            out.append(s[0] << 2 | s[1] >> 4)
            if chunk.count > 2 { out.append(s[1] << 4 | s[2] >> 2) }
            if chunk.count > 3 { out.append(s[2] << 6 | s[3]) }
            index += 4
        }
        return out
    }
}
