import BluetoothCore

/// A short, escaped quotation of untrusted bytes, for error results and logs.
///
/// Never more than ``maximumBytes`` of the payload, every control character and quote escaped, so a payload can
/// neither flood a log nor forge a log line with `\n`: `"12\n34…" (2048 bytes)`.
package enum PayloadExcerpt {
    /// How many payload bytes an excerpt quotes at most.
    package static let maximumBytes = 32

    /// The first bytes of `payload` in double quotes, escaped; `…` and the total size when cut.
    package static func quote(_ payload: some Collection<UInt8>, maximumBytes: Int = maximumBytes) -> String {
        var out = "\""
        var taken = 0
        for byte in payload.prefix(maximumBytes) {
            taken += 1
            switch byte {
            case UInt8(ascii: "\""): out += "\\\""
            case UInt8(ascii: "\\"): out += "\\\\"
            case UInt8(ascii: "\n"): out += "\\n"
            case UInt8(ascii: "\r"): out += "\\r"
            case UInt8(ascii: "\t"): out += "\\t"
            case 0x20..<0x7F: out.unicodeScalars.append(Unicode.Scalar(byte))
            default: out += "\\x" + Hex.string(CollectionOfOne(byte))
            }
        }
        out += "\""
        let total = payload.count
        if total > taken { out = out.dropLast() + "…\" (\(total) bytes)" }
        return out
    }

}
