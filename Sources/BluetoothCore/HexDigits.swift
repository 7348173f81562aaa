/// Hex digit conversion shared by the parsers in this module; no Foundation on these paths.
enum HexDigits {
    static let lowercase: [UInt8] = Array("0123456789abcdef".utf8)
    static let uppercase: [UInt8] = Array("0123456789ABCDEF".utf8)

    /// The value of one ASCII hex digit, or nil for anything else.
    static func value(of byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte &- UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte &- UInt8(ascii: "a") &+ 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte &- UInt8(ascii: "A") &+ 10
        default: nil
        }
    }
}
