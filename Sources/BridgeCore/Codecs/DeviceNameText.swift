/// A GAP Device Name (0x2A00) as text, the way bluetoothd makes one of a name it reads (profiles/gap/gas.c
/// name2utf8()): valid UTF-8 is kept; otherwise every non-ASCII byte becomes a space and the ends are trimmed.
/// At most 248 bytes are looked at, the longest name the characteristic may hold.
package enum DeviceNameText {
    package static let maximumBytes = 248

    package static func text(of bytes: [UInt8]) -> String? {
        var bytes = Array(bytes.prefix(maximumBytes))
        // A name padded with NULs ends at the first one.
        if let end = bytes.firstIndex(of: 0) { bytes = Array(bytes[..<end]) }
        let text =
            String(validating: bytes, as: UTF8.self)
            ?? String(decoding: bytes.map { $0 < 0x80 ? $0 : UInt8(ascii: " ") }, as: UTF8.self)
        let trimmed = text.trimmingWhitespace()
        return trimmed.isEmpty ? nil : trimmed
    }
}
