/// An integer field with an exact decimal scale and offset: `value = raw × scale + offset`.
package struct ScaledInteger: Hashable, Sendable {
    /// The field's byte layout.
    package let layout: IntegerLayout
    /// The factor applied to the raw integer (1 when unscaled).
    package let scale: DecimalNumber
    /// The constant added after scaling (0 when absent).
    package let offset: DecimalNumber

    /// Creates a scaled integer; a zero scale is refused because nothing could be encoded.
    package init?(layout: IntegerLayout, scale: DecimalNumber = .one, offset: DecimalNumber = .zero) {
        guard scale.significand != 0 else { return nil }
        self.layout = layout
        self.scale = scale.normalized
        self.offset = offset.normalized
    }

    private var isPlain: Bool { scale == .one && offset == .zero }

    /// Formats the raw bytes as decimal text. The bytes must be exactly the layout's width.
    func decode(_ bytes: ArraySlice<UInt8>) throws(CodecError) -> String {
        let value = layout.read(bytes)
        if isPlain {
            switch value {
            case .signed(let number): return String(number)
            case .unsigned(let number): return String(number)
            }
        }
        let raw: Int64
        switch value {
        case .signed(let number): raw = number
        case .unsigned(let number):
            guard let fits = Int64(exactly: number) else {
                return String(Double(number) * scale.doubleValue + offset.doubleValue)
            }
            raw = fits
        }
        let exponent = min(scale.exponent, offset.exponent)
        guard let scaleDigits = scale.significand(atExponent: exponent),
            let offsetDigits = offset.significand(atExponent: exponent)
        else { return String(Double(raw) * scale.doubleValue + offset.doubleValue) }
        let (product, overflow) = raw.multipliedReportingOverflow(by: scaleDigits)
        let (sum, overflowSum) = product.addingReportingOverflow(offsetDigits)
        guard !overflow, !overflowSum else {
            return String(Double(raw) * scale.doubleValue + offset.doubleValue)
        }
        return DecimalNumber(significand: sum, exponent: exponent).description
    }

    /// Turns decimal text into the raw field, refusing values the scale cannot represent exactly or that
    /// do not fit the field.
    func encode(_ text: Substring, codecName: String) throws(CodecError) -> [UInt8] {
        // A plain integer written out in full may use the whole 64-bit range, as decode prints it; the decimal
        // arithmetic below holds 18 digits.
        if isPlain, let unsigned = UInt64(text) {
            guard unsigned <= layout.maximum else { throw CodecError("\"\(text)\" is out of range for \(codecName)") }
            return layout.write(bitPattern: unsigned)
        }
        if isPlain, let signed = Int64(text), signed < 0 {
            guard signed >= layout.minimum else { throw CodecError("\"\(text)\" is out of range for \(codecName)") }
            return layout.write(bitPattern: UInt64(bitPattern: signed))
        }
        guard let number = DecimalNumber(text) else {
            throw CodecError("\"\(text)\" is not a number (codec \(codecName))")
        }
        let exponent = min(number.exponent, offset.exponent, scale.exponent)
        guard let valueDigits = number.significand(atExponent: exponent),
            let offsetDigits = offset.significand(atExponent: exponent),
            let scaleDigits = scale.significand(atExponent: exponent)
        else { throw CodecError("\"\(text)\" is out of range for \(codecName)") }
        let (difference, overflow) = valueDigits.subtractingReportingOverflow(offsetDigits)
        guard !overflow else { throw CodecError("\"\(text)\" is out of range for \(codecName)") }
        guard difference % scaleDigits == 0 else {
            throw CodecError("\"\(text)\" is not a multiple of the scale \(scale) (codec \(codecName))")
        }
        let raw = difference / scaleDigits
        guard raw >= layout.minimum, raw < 0 || UInt64(raw) <= layout.maximum else {
            throw CodecError("\"\(text)\" is out of range for \(codecName)")
        }
        return layout.write(bitPattern: UInt64(bitPattern: raw))
    }
}
