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
    /// do not fit the field. Every refusal of a number says which range the codec accepts.
    ///
    /// - Parameter acceptedRange: what error messages name as the range; the field's own range when nil.
    func encode(_ text: Substring, codecName: String, acceptedRange: String? = nil) throws(CodecError) -> [UInt8] {
        let range = acceptedRange ?? rangeDescription
        let quoted = PayloadExcerpt.quote(Array(text.utf8))
        // A plain integer written out in full may use the whole 64-bit range, as decode prints it; the decimal
        // arithmetic below holds 18 digits.
        if isPlain, let unsigned = UInt64(text) {
            guard unsigned <= layout.maximum else { throw outOfRange(quoted, codecName, range) }
            return layout.write(bitPattern: unsigned)
        }
        if isPlain, let signed = Int64(text), signed < 0 {
            guard signed >= layout.minimum else { throw outOfRange(quoted, codecName, range) }
            return layout.write(bitPattern: UInt64(bitPattern: signed))
        }
        // Normalized, so that `0e-64` or `1.000…` does not need an exponent no field can be scaled to.
        guard let number = DecimalNumber(text)?.normalized else {
            if Self.looksNumeric(text) { throw outOfRange(quoted, codecName, range) }
            throw CodecError("\(quoted) is not a number (codec \(codecName) accepts \(range))")
        }
        let exponent = min(number.exponent, offset.exponent, scale.exponent)
        guard let valueDigits = number.significand(atExponent: exponent),
            let offsetDigits = offset.significand(atExponent: exponent),
            let scaleDigits = scale.significand(atExponent: exponent)
        else { throw outOfRange(quoted, codecName, range) }
        let (difference, overflow) = valueDigits.subtractingReportingOverflow(offsetDigits)
        guard !overflow else { throw outOfRange(quoted, codecName, range) }
        guard difference % scaleDigits == 0 else {
            throw CodecError("\(quoted) is not a multiple of the scale \(scale) (codec \(codecName))")
        }
        let raw = difference / scaleDigits
        guard raw >= layout.minimum, raw < 0 || UInt64(raw) <= layout.maximum else {
            throw outOfRange(quoted, codecName, range)
        }
        return layout.write(bitPattern: UInt64(bitPattern: raw))
    }

    private func outOfRange(_ quoted: String, _ codecName: String, _ range: String) -> CodecError {
        CodecError("\(quoted) is out of range for \(codecName) (\(range))")
    }

    /// `minimum…maximum` of the values this field can carry, after scale and offset: `0…255`, `-40…87.5`.
    package var rangeDescription: String {
        let low = value(ofRaw: layout.minimum, unsigned: nil)
        let high = value(ofRaw: nil, unsigned: layout.maximum)
        return scale.significand < 0 ? "\(high)…\(low)" : "\(low)…\(high)"
    }

    /// `raw × scale + offset` as text, exact when it fits 64 bits, else the nearest double.
    private func value(ofRaw signed: Int64?, unsigned: UInt64?) -> String {
        if isPlain { return signed.map { String($0) } ?? unsigned.map { String($0) } ?? "0" }
        let rawDouble = signed.map(Double.init) ?? unsigned.map(Double.init) ?? 0
        let approximate = String(rawDouble * scale.doubleValue + offset.doubleValue)
        guard let raw = signed ?? unsigned.flatMap({ Int64(exactly: $0) }) else { return approximate }
        let exponent = min(scale.exponent, offset.exponent)
        guard let scaleDigits = scale.significand(atExponent: exponent),
            let offsetDigits = offset.significand(atExponent: exponent)
        else { return approximate }
        let (product, overflow) = raw.multipliedReportingOverflow(by: scaleDigits)
        let (sum, overflowSum) = product.addingReportingOverflow(offsetDigits)
        guard !overflow, !overflowSum else { return approximate }
        return DecimalNumber(significand: sum, exponent: exponent).description
    }

    /// Sign, digits, point and exponent only, with at least one digit: a number too long to hold exactly.
    private static func looksNumeric(_ text: Substring) -> Bool {
        var sawDigit = false
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): sawDigit = true
            case UInt8(ascii: "+"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "e"), UInt8(ascii: "E"): break
            default: return false
            }
        }
        return sawDigit
    }
}
