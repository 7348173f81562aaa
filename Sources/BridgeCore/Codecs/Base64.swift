#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Base64 for the `base64` codec: Foundation's coder, with the leniency MQTT users expect on input.
enum Base64 {
    /// Standard base64 (RFC 4648 §4) with padding.
    static func encode(_ bytes: [UInt8]) -> [UInt8] { Array(Data(bytes).base64EncodedData()) }

    /// Decodes standard or URL-safe base64 (RFC 4648 §5); padding is optional, whitespace is ignored. Nil when
    /// malformed (a stray character, padding in the middle, more than two `=`, an impossible length).
    static func decode(_ text: [UInt8]) -> [UInt8]? {
        var normalized: [UInt8] = []
        normalized.reserveCapacity(text.count + 2)
        var padding = 0
        for byte in text {
            switch byte {
            case 0x20, 0x0A, 0x0D, 0x09: continue
            case UInt8(ascii: "="): padding += 1
            case _ where padding > 0: return nil  // data after padding
            case UInt8(ascii: "-"): normalized.append(UInt8(ascii: "+"))
            case UInt8(ascii: "_"): normalized.append(UInt8(ascii: "/"))
            default: normalized.append(byte)
            }
        }
        guard padding <= 2, normalized.count % 4 != 1 else { return nil }
        if padding > 0, (normalized.count + padding) % 4 != 0 { return nil }
        // Foundation requires the padding; restore it, then let it reject any character outside the alphabet.
        normalized.append(contentsOf: repeatElement(UInt8(ascii: "="), count: (4 - normalized.count % 4) % 4))
        return Data(base64Encoded: Data(normalized)).map { Array($0) }
    }
}
