/// An exact decimal number `significand × 10^exponent`, used for codec scales, offsets and payload text.
///
/// Scaled integers are formatted and parsed with integer arithmetic only, so `2345 × 0.01` prints as
/// `23.45` (never `23.450000000000003`) and `/set` payloads that the scale cannot represent exactly are refused.
package struct DecimalNumber: Hashable, Sendable, CustomStringConvertible {
    /// The digits, sign included.
    package let significand: Int64
    /// The power of ten.
    package let exponent: Int

    /// Creates `significand × 10^exponent`.
    package init(significand: Int64, exponent: Int) {
        self.significand = significand
        self.exponent = exponent
    }

    package static let one = DecimalNumber(significand: 1, exponent: 0)
    package static let zero = DecimalNumber(significand: 0, exponent: 0)

    /// Parses `-12`, `0.01`, `+3.5`, `1e-3`, `2.5E2`; at most 18 significant digits. Nil for anything else.
    package init?(_ text: Substring) {
        var bytes = Array(text.utf8)[...]
        var negative = false
        if let first = bytes.first, first == UInt8(ascii: "-") || first == UInt8(ascii: "+") {
            negative = first == UInt8(ascii: "-")
            bytes = bytes.dropFirst()
        }
        var significand: Int64 = 0
        var exponent = 0
        var digitCount = 0
        var sawPoint = false
        while let byte = bytes.first, byte != UInt8(ascii: "e"), byte != UInt8(ascii: "E") {
            bytes = bytes.dropFirst()
            if byte == UInt8(ascii: ".") {
                guard !sawPoint else { return nil }
                sawPoint = true
                continue
            }
            guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { return nil }
            digitCount += 1
            if significand == 0 && byte == UInt8(ascii: "0") {
                if sawPoint { exponent -= 1 }
                continue
            }
            guard significand < 100_000_000_000_000_000 else { return nil }
            significand = significand * 10 + Int64(byte - UInt8(ascii: "0"))
            if sawPoint { exponent -= 1 }
        }
        guard digitCount > 0 else { return nil }
        if bytes.first != nil {
            bytes = bytes.dropFirst()
            guard let parsed = Int(String(decoding: bytes, as: UTF8.self)), (-64...64).contains(parsed) else { return nil }
            exponent += parsed
        }
        self.init(significand: negative ? -significand : significand, exponent: exponent)
    }

    /// Parses a whole string; see ``init(_:)-(Substring)``.
    package init?(_ text: String) {
        self.init(Substring(text))
    }

    /// The same number with trailing zeros removed from the significand.
    package var normalized: DecimalNumber {
        guard significand != 0 else { return .zero }
        var value = self
        while value.significand % 10 == 0 {
            value = DecimalNumber(significand: value.significand / 10, exponent: value.exponent + 1)
        }
        return value
    }

    /// The significand rescaled to `targetExponent` (which must not exceed ``exponent``); nil on overflow.
    func significand(atExponent targetExponent: Int) -> Int64? {
        var result = significand
        for _ in 0..<(exponent - targetExponent) {
            let (product, overflow) = result.multipliedReportingOverflow(by: 10)
            if overflow { return nil }
            result = product
        }
        return result
    }

    /// Plain decimal text without exponent or trailing zeros: `23.45`, `-0.5`, `1200`.
    package var description: String {
        let value = normalized
        var digits = Array(String(value.significand.magnitude).utf8)
        if value.exponent > 0 {
            digits += [UInt8](repeating: UInt8(ascii: "0"), count: value.exponent)
        } else if value.exponent < 0 {
            let fraction = -value.exponent
            if digits.count <= fraction {
                digits = [UInt8](repeating: UInt8(ascii: "0"), count: fraction - digits.count + 1) + digits
            }
            digits.insert(UInt8(ascii: "."), at: digits.count - fraction)
        }
        if value.significand < 0 { digits.insert(UInt8(ascii: "-"), at: 0) }
        return String(decoding: digits, as: UTF8.self)
    }

    /// The nearest `Double`, for callers that need floating point.
    package var doubleValue: Double {
        var result = Double(significand)
        if exponent >= 0 {
            for _ in 0..<exponent { result *= 10 }
        } else {
            for _ in 0..<(-exponent) { result /= 10 }
        }
        return result
    }
}
