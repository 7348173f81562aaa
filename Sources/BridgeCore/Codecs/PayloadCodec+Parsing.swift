extension PayloadCodec {
    /// Parses a configured codec name.
    ///
    /// Grammar for numbers: `(u)int8`, `(u)int{16,24,32,64}{le,be}`, then optionally `*<scale>` and
    /// `+<offset>` or `-<offset>` (exact decimals): `uint16le`, `int16le*0.01`, `uint8*0.5-40`. Floats:
    /// `float32le`, `float32be`, `float64le`, `float64be`. Named codecs: `raw`, `hex`, `base64`, `utf8`,
    /// `battery_level`, `heart_rate_measurement`, `temperature`, `humidity`.
    package init(parsing text: String) throws(CodecError) {
        switch text {
        case "raw": self = .raw
        case "hex": self = .hex
        case "base64": self = .base64
        case "utf8": self = .utf8
        case "float32le": self = .float32(littleEndian: true)
        case "float32be": self = .float32(littleEndian: false)
        case "float64le": self = .float64(littleEndian: true)
        case "float64be": self = .float64(littleEndian: false)
        case "battery_level": self = .batteryLevel
        case "heart_rate_measurement": self = .heartRateMeasurement
        case "temperature": self = .temperature
        case "humidity": self = .humidity
        default:
            guard let scaled = Self.parseInteger(text) else {
                throw CodecError(
                    "\"\(text)\" is not a codec (expected raw, hex, base64, utf8, an integer such as uint16le*0.01, "
                        + "float32le, battery_level, heart_rate_measurement, temperature or humidity)"
                )
            }
            self = .integer(scaled)
        }
    }

    private static func parseInteger(_ text: String) -> ScaledInteger? {
        var rest = Substring(text)
        let isSigned: Bool
        if rest.hasPrefix("uint") {
            isSigned = false
            rest = rest.dropFirst(4)
        } else if rest.hasPrefix("int") {
            isSigned = true
            rest = rest.dropFirst(3)
        } else {
            return nil
        }
        let widthText = rest.prefix(while: \.isNumber)
        guard let bits = Int(widthText) else { return nil }
        rest = rest.dropFirst(widthText.count)
        var littleEndian = true
        if rest.hasPrefix("le") || rest.hasPrefix("be") {
            littleEndian = rest.hasPrefix("le")
            rest = rest.dropFirst(2)
        } else if bits != 8 {
            return nil  // byte order must be explicit for multi-byte fields
        }
        if bits == 8, text.contains("8le") || text.contains("8be") { return nil }
        guard let layout = IntegerLayout(bits: bits, isSigned: isSigned, isLittleEndian: littleEndian) else {
            return nil
        }
        var scale = DecimalNumber.one
        var offset = DecimalNumber.zero
        if rest.first == "*" {
            rest = rest.dropFirst()
            let scaleText = rest.prefix(while: { $0 != "+" && $0 != "-" })
            guard let parsed = DecimalNumber(scaleText), parsed.significand > 0 else { return nil }
            scale = parsed
            rest = rest.dropFirst(scaleText.count)
        }
        if let sign = rest.first, sign == "+" || sign == "-" {
            guard let parsed = DecimalNumber(rest.dropFirst()), !rest.dropFirst().hasPrefix("+"),
                !rest.dropFirst().hasPrefix("-")
            else { return nil }
            offset = sign == "-" ? DecimalNumber(significand: -parsed.significand, exponent: parsed.exponent) : parsed
            rest = rest.prefix(0)
        }
        guard rest.isEmpty else { return nil }
        return ScaledInteger(layout: layout, scale: scale, offset: offset)
    }
}
