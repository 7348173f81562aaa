import Testing
import YAML

/// Each scalar rule of `YAMLDecoder`, both what it accepts and what it refuses.
@Suite struct YAMLScalarRuleTests {
    /// Decodes `value` of a one-key mapping, so the scalar is written as in a configuration file.
    private func decode<Value: Decodable>(_ type: Value.Type, _ scalar: String) throws -> Value {
        try YAMLDecoder().decode([String: Value].self, from: "value: \(scalar)")["value"].unwrap()
    }

    private func decodesNil(_ scalar: String) throws -> Bool {
        struct Probe: Decodable {
            let isNil: Bool
            init(from decoder: any Decoder) throws {
                isNil = try decoder.singleValueContainer().decodeNil()
            }
        }
        return try YAMLDecoder().decode([String: Probe].self, from: "value: \(scalar)")["value"].unwrap().isNil
    }

    @Test(arguments: ["", "~", "null", "Null", "NULL"])
    func plainNullWords(scalar: String) throws {
        #expect(try decodesNil(scalar))
        #expect(try decode(String?.self, scalar) == nil)
        #expect(throws: DecodingError.self) { try decode(String.self, scalar) }
    }

    @Test(arguments: ["'~'", "\"null\"", "''", "nil", "NUll", "none"])
    func everythingElseIsNotNull(scalar: String) throws {
        #expect(try !decodesNil(scalar))
        #expect(try decode(String?.self, scalar) != nil)
    }

    @Test(arguments: [
        ("true", true), ("True", true), ("TRUE", true), ("yes", true), ("Yes", true), ("on", true), ("ON", true),
        ("false", false), ("False", false), ("no", false), ("NO", false), ("off", false), ("Off", false),
    ])
    func plainBooleans(scalar: String, value: Bool) throws {
        #expect(try decode(Bool.self, scalar) == value)
    }

    @Test(arguments: ["'true'", "\"yes\"", "1", "0", "y", "maybe", "[true]"])
    func notBooleans(scalar: String) {
        #expect(throws: DecodingError.self) { try decode(Bool.self, scalar) }
    }

    @Test(arguments: [
        ("42", 42), ("-42", -42), ("+7", 7), ("0", 0), ("0102", 102), ("1_000_000", 1_000_000), ("0x004C", 76),
        ("0XfF", 255), ("-0x10", -16), ("0o17", 15), ("0b1010", 10), ("0b_1010_0000", 160),
    ])
    func plainIntegers(scalar: String, value: Int) throws {
        #expect(try decode(Int.self, scalar) == value)
    }

    @Test(arguments: [
        "'42'", "\"0x4C\"", "4.0", "1e3", "0x", "_", "--1", "+-1", "0x-1", "12abc", "0b102", ".inf", "soon",
    ])
    func notIntegers(scalar: String) {
        #expect(throws: DecodingError.self) { try decode(Int.self, scalar) }
    }

    @Test func everyIntegerWidthChecksItsRange() throws {
        #expect(try decode(UInt8.self, "255") == 255)
        #expect(throws: DecodingError.self) { try decode(UInt8.self, "256") }
        #expect(throws: DecodingError.self) { try decode(UInt8.self, "-1") }
        #expect(try decode(Int8.self, "-128") == -128)
        #expect(throws: DecodingError.self) { try decode(Int8.self, "128") }
        #expect(try decode(Int16.self, "0x7FFF") == .max)
        #expect(try decode(UInt16.self, "0xFFFF") == .max)
        #expect(try decode(Int32.self, "-2147483648") == .min)
        #expect(try decode(UInt32.self, "4_294_967_295") == .max)
        #expect(try decode(Int64.self, "-0x8000000000000000") == .min)
        #expect(try decode(UInt64.self, "0xFFFFFFFFFFFFFFFF") == .max)
        #expect(try decode(UInt.self, "18446744073709551615") == .max)
        #expect(throws: DecodingError.self) { try decode(Int.self, "9223372036854775808") }
    }

    @Test(arguments: [
        ("1.5", 1.5), ("-2.25", -2.25), ("+0.5", 0.5), (".5", 0.5), ("1.", 1), ("1e3", 1000), ("2.5E-3", 0.0025),
        ("1e-300", 1e-300), ("7", 7), ("0x10", 16), ("-1_000", -1000),
    ])
    func plainFloatingPointNumbers(scalar: String, value: Double) throws {
        #expect(try decode(Double.self, scalar) == value)
        #expect(try decode(Float.self, scalar) == Float(value))
    }

    @Test func infinitiesAndNaN() throws {
        for scalar in [".inf", ".Inf", ".INF", "+.inf"] { #expect(try decode(Double.self, scalar) == .infinity) }
        for scalar in ["-.inf", "-.Inf", "-.INF"] { #expect(try decode(Double.self, scalar) == -.infinity) }
        for scalar in [".nan", ".NaN", ".NAN"] { #expect(try decode(Double.self, scalar).isNaN) }
        #expect(try decode(Float.self, "-.inf") == -.infinity)
    }

    @Test(arguments: ["'1.5'", "inf", "nan", "infinity", "0x1p3", "1e", "e3", ".", "1.5.2", "1,5", "1e400", "soon"])
    func notFloatingPointNumbers(scalar: String) {
        #expect(throws: DecodingError.self) { try decode(Double.self, scalar) }
    }

    @Test func aFiniteTextTooLargeForFloatIsRefused() throws {
        #expect(try decode(Double.self, "1e300") == 1e300)
        #expect(throws: DecodingError.self) { try decode(Float.self, "1e300") }
    }

    @Test(arguments: [
        ("42", "42"), ("0102", "0102"), ("0x004C", "0x004C"), ("yes", "yes"), ("1.50", "1.50"), (".inf", ".inf"),
        ("'~'", "~"), ("\"\"", ""), ("'quoted: text'", "quoted: text"), ("\"a\\tb\"", "a\tb"),
        ("|\n  block\n", "block\n"),
    ])
    func stringsAreAnyScalarAsWritten(scalar: String, value: String) throws {
        #expect(try decode(String.self, scalar) == value)
    }

    @Test(arguments: ["[a]", "{ a: 1 }"])
    func stringsAreNotCollections(scalar: String) {
        #expect(throws: DecodingError.self) { try decode(String.self, scalar) }
    }
}

extension Optional {
    /// The value, or a test failure naming what was missing.
    fileprivate func unwrap(sourceLocation: SourceLocation = #_sourceLocation) throws -> Wrapped {
        try #require(self, sourceLocation: sourceLocation)
    }
}
