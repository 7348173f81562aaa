/// How plain scalars read as null, booleans and numbers (``YAMLDecoder`` documents the rules for its users).
///
/// The words are YAML 1.2's core schema, plus YAML 1.1's `yes/no/on/off` booleans that configuration files still
/// use. Only plain scalars are ever resolved: a quoted or block scalar is always text.
enum YAMLScalarRules {
    static func isNull(_ text: String) -> Bool {
        text.isEmpty || text == "~" || text == "null" || text == "Null" || text == "NULL"
    }

    static func bool(_ text: String) -> Bool? {
        switch text.lowercased() {
        case "true", "yes", "on": true
        case "false", "no", "off": false
        default: nil
        }
    }

    /// Decimal with an optional sign, or `0x`/`0o`/`0b` after the sign; `_` may separate digits. Nil when the text
    /// is not an integer or does not fit `Integer`.
    static func integer<Integer: FixedWidthInteger>(_ text: String, as type: Integer.Type = Integer.self) -> Integer? {
        var rest = Substring(text)
        var sign = ""
        if let first = rest.first, first == "-" || first == "+" {
            sign = first == "-" ? "-" : ""
            rest = rest.dropFirst()
        }
        var radix = 10
        let prefix = rest.prefix(2).lowercased()
        if prefix == "0x" || prefix == "0o" || prefix == "0b" {
            radix = prefix == "0x" ? 16 : prefix == "0o" ? 8 : 2
            rest = rest.dropFirst(2)
        }
        let digits = rest.filter { $0 != "_" }
        // Integer(_:radix:) would take a second sign; the digits must be digits only.
        guard !digits.isEmpty, digits.allSatisfy({ $0.isASCII && $0.isHexDigit }) else { return nil }
        return Integer(sign + digits, radix: radix)
    }

    /// YAML 1.2's core float (`[-+]? ( . digits | digits [ . digits? ] ) ( [eE] [-+]? digits )?`), `.inf` with a
    /// sign or none, `.nan`, or any ``integer(_:as:)``. Nil otherwise, and nil when a finite text overflows.
    static func floatingPoint<Number: BinaryFloatingPoint & LosslessStringConvertible>(
        _ text: String, as type: Number.Type = Number.self
    ) -> Number? {
        switch text {
        case ".inf", ".Inf", ".INF", "+.inf", "+.Inf", "+.INF": return .infinity
        case "-.inf", "-.Inf", "-.INF": return -.infinity
        case ".nan", ".NaN", ".NAN": return .nan
        default: break
        }
        if isCoreFloat(text), let value = Number(text) {
            return value.isFinite ? value : nil
        }
        if let value = integer(text, as: Int64.self) { return Number(value) }
        if let value = integer(text, as: UInt64.self) { return Number(value) }
        return nil
    }

    private static func isCoreFloat(_ text: String) -> Bool {
        var bytes = Array(text.utf8)[...]
        func digits() -> Int {
            let count = bytes.prefix { $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }.count
            bytes = bytes.dropFirst(count)
            return count
        }
        if let sign = bytes.first, sign == UInt8(ascii: "-") || sign == UInt8(ascii: "+") { bytes = bytes.dropFirst() }
        if bytes.first == UInt8(ascii: ".") {
            bytes = bytes.dropFirst()
            guard digits() > 0 else { return false }
        } else {
            guard digits() > 0 else { return false }
            if bytes.first == UInt8(ascii: ".") {
                bytes = bytes.dropFirst()
                _ = digits()
            }
        }
        if let exponent = bytes.first, exponent == UInt8(ascii: "e") || exponent == UInt8(ascii: "E") {
            bytes = bytes.dropFirst()
            if let sign = bytes.first, sign == UInt8(ascii: "-") || sign == UInt8(ascii: "+") {
                bytes = bytes.dropFirst()
            }
            guard digits() > 0 else { return false }
        }
        return bytes.isEmpty
    }
}
