import BridgeCore
import Foundation
import Testing

@Suite struct PayloadCodecTests {
    static let allNames = [
        "raw", "hex", "base64", "utf8", "uint8", "int8", "uint16le", "int16be", "uint24le", "int32le",
        "uint64be", "int64le", "int16le*0.01", "uint8*0.5-40", "uint16be*2+1.5", "float32le", "float32be",
        "float64le", "float64be", "battery_level", "heart_rate_measurement", "temperature", "humidity",
    ]

    private func text(_ bytes: [UInt8]) -> String { String(decoding: bytes, as: UTF8.self) }

    @Test(arguments: allNames)
    func namesRoundTrip(name: String) throws {
        #expect(try PayloadCodec(parsing: name).description == name)
    }

    @Test(arguments: [
        "uint12le", "uint16", "uint8le", "int16le*0", "int16le*-1", "float16le", "", "utf-8", "int16le*0.01+",
        "uint16le*abc",
    ])
    func rejectsMalformedCodecNames(name: String) {
        #expect(throws: CodecError.self) { try PayloadCodec(parsing: name) }
    }

    /// Decoding short, patterned and random bytes either fails with a ``CodecError`` (the typed throw) or gives a
    /// text that encodes back to exactly the same bytes; heart_rate_measurement, which cannot be written, gives a
    /// JSON object instead. The random bytes come from a fixed seed, so a failure repeats.
    @Test(arguments: allNames)
    func decodedValuesEncodeBackToTheSameBytes(name: String) throws {
        let codec = try PayloadCodec(parsing: name)
        var generator = SplitMix64(seed: 0x6761_7474_7761_7900 &+ UInt64(Self.allNames.firstIndex(of: name)!))
        var decoded = 0
        for length in 0...24 {
            var inputs = [UInt8(0x00), 0xFF, 0x80, 0x7F].map { [UInt8](repeating: $0, count: length) }
            for _ in 0..<50 { inputs.append((0..<length).map { _ in UInt8.random(in: 0...255, using: &generator) }) }
            for input in inputs {
                let text: [UInt8]
                do { text = try codec.decode(input) } catch { continue }
                decoded += 1
                try expectRoundTrip(codec, name: name, input: input, text: text)
            }
        }
        #expect(decoded > 0, "no input decoded with \(name): the property was never exercised")
    }

    private func expectRoundTrip(_ codec: PayloadCodec, name: String, input: [UInt8], text: [UInt8]) throws {
        let shown = "\(name) \(input) → \(self.text(text))"
        if name == "heart_rate_measurement" {
            #expect(throws: CodecError.self, "\(shown)") { try codec.encode(payload: text) }
            #expect(try JSONSerialization.jsonObject(with: Data(text)) is [String: Any], "\(shown)")
            return
        }
        // A float that is not finite has no exact text form to write back (NaN payloads, infinities).
        if name.hasPrefix("float"), let value = Double(self.text(text)), !value.isFinite { return }
        #expect(try codec.encode(payload: text) == input, "\(shown)")
    }

    @Test func sixtyFourBitExtremesAreWrittenBackAsTheyAreRead() throws {
        let unsigned = try PayloadCodec(parsing: "uint64be")
        #expect(text(try unsigned.decode([UInt8](repeating: 0xFF, count: 8))) == "18446744073709551615")
        #expect(try unsigned.encode(payload: Array("18446744073709551615".utf8)) == [UInt8](repeating: 0xFF, count: 8))
        #expect(throws: CodecError("\"18446744073709551616\" is out of range for uint64be (0…18446744073709551615)")) {
            try unsigned.encode(payload: Array("18446744073709551616".utf8))
        }
        let signed = try PayloadCodec(parsing: "int64le")
        let minimum: [UInt8] = [0, 0, 0, 0, 0, 0, 0, 0x80]
        #expect(text(try signed.decode(minimum)) == "-9223372036854775808")
        #expect(try signed.encode(payload: Array("-9223372036854775808".utf8)) == minimum)
        #expect(throws: CodecError("\"-1\" is out of range for uint64be (0…18446744073709551615)")) {
            try unsigned.encode(payload: Array("-1".utf8))
        }
    }

    @Test func scaledIntegersAreExact() throws {
        let codec = try PayloadCodec(parsing: "int16le*0.01")
        #expect(text(try codec.decode([0x29, 0x09])) == "23.45")
        #expect(text(try codec.decode([0xFF, 0xFF])) == "-0.01")
        #expect(try codec.encode(payload: Array("23.45".utf8)) == [0x29, 0x09])
        #expect(try codec.encode(payload: Array(" -0.01\n".utf8)) == [0xFF, 0xFF])
        #expect(throws: CodecError("\"23.456\" is not a multiple of the scale 0.01 (codec int16le*0.01)")) {
            try codec.encode(payload: Array("23.456".utf8))
        }
        #expect(throws: CodecError("\"400\" is out of range for int16le*0.01 (-327.68…327.67)")) {
            try codec.encode(payload: Array("400".utf8))
        }
        let offset = try PayloadCodec(parsing: "uint8*0.5-40")
        #expect(text(try offset.decode([100])) == "10")
        #expect(try offset.encode(payload: Array("-39.5".utf8)) == [1])
    }

    @Test func integersHonourWidthSignAndByteOrder() throws {
        #expect(text(try PayloadCodec(parsing: "uint16be").decode([0x01, 0x02])) == "258")
        #expect(text(try PayloadCodec(parsing: "int24le").decode([0xFF, 0xFF, 0xFF])) == "-1")
        #expect(
            text(try PayloadCodec(parsing: "uint64le").decode([UInt8](repeating: 0xFF, count: 8)))
                == "18446744073709551615")
        #expect(
            text(try PayloadCodec(parsing: "int64be").decode([0x80] + [UInt8](repeating: 0, count: 7)))
                == "-9223372036854775808")
        #expect(throws: CodecError("uint16le needs 2 bytes, got 3")) {
            try PayloadCodec(parsing: "uint16le").decode([1, 2, 3])
        }
        #expect(throws: CodecError.self) { try PayloadCodec(parsing: "uint8").encode(payload: Array("256".utf8)) }
        #expect(throws: CodecError.self) { try PayloadCodec(parsing: "uint8").encode(payload: Array("-1".utf8)) }
        #expect(throws: CodecError.self) { try PayloadCodec(parsing: "uint8").encode(payload: Array("ten".utf8)) }
    }

    struct RoundTrip: Sendable, CustomTestStringConvertible {
        let codec: String, payload: String
        var testDescription: String { "\(codec) \(payload)" }
    }

    @Test(arguments: [
        RoundTrip(codec: "hex", payload: "00ff10"), RoundTrip(codec: "base64", payload: "AP8Q"),
        RoundTrip(codec: "base64", payload: "AP8="), RoundTrip(codec: "utf8", payload: "open ✓"),
        RoundTrip(codec: "uint32le", payload: "4294967295"), RoundTrip(codec: "int8", payload: "-128"),
        RoundTrip(codec: "float32le", payload: "21.5"), RoundTrip(codec: "float64be", payload: "-0.1"),
        RoundTrip(codec: "battery_level", payload: "87"), RoundTrip(codec: "temperature", payload: "-12.34"),
        RoundTrip(codec: "humidity", payload: "45.5"), RoundTrip(codec: "raw", payload: "anything"),
        RoundTrip(codec: "uint16le*0.01", payload: "655.35"),
    ])
    func encodingThenDecodingGivesThePayloadBack(testCase: RoundTrip) throws {
        let codec = try PayloadCodec(parsing: testCase.codec)
        let bytes = try codec.encode(payload: Array(testCase.payload.utf8))
        #expect(text(try codec.decode(bytes)) == testCase.payload)
    }

    @Test func base64InputIsLenientInFormAndStrictInContent() throws {
        let codec = PayloadCodec.base64
        #expect(try codec.encode(payload: Array("AP8".utf8)) == [0x00, 0xFF], "padding is optional")
        #expect(try codec.encode(payload: Array(" AP8Q\n".utf8)) == [0x00, 0xFF, 0x10], "whitespace is ignored")
        #expect(try codec.encode(payload: Array("-_-_".utf8)) == [0xFB, 0xFF, 0xBF], "URL-safe alphabet")
        #expect(try codec.encode(payload: Array("".utf8)) == [])
        for bad in ["AP=8", "AP8Q!", "A", "AP8Q====", "AP8Q=", "ÄP8Q"] {
            #expect(throws: CodecError.self, "\(bad)") { try codec.encode(payload: Array(bad.utf8)) }
        }
    }

    @Test func textCodecsRefuseWhatTheyCannotEncode() throws {
        #expect(throws: CodecError.self) { try PayloadCodec.hex.encode(payload: Array("0g".utf8)) }
        #expect(throws: CodecError.self) { try PayloadCodec.hex.encode(payload: Array("abc".utf8)) }
        #expect(try PayloadCodec.hex.encode(payload: Array("0x0A:1b".utf8)) == [0x0A, 0x1B])
        #expect(throws: CodecError.self) { try PayloadCodec.base64.encode(payload: Array("A===".utf8)) }
        #expect(throws: CodecError.self) { try PayloadCodec.utf8.encode(payload: [0xC3]) }
        #expect(throws: CodecError.self) { try PayloadCodec.utf8.decode([0xFF]) }
        #expect(throws: CodecError.self) {
            try PayloadCodec.float32(littleEndian: true).encode(payload: Array("1e39".utf8))
        }
        #expect(throws: CodecError.self) { try PayloadCodec.batteryLevel.encode(payload: Array("101".utf8)) }
        #expect(throws: CodecError.self) { try PayloadCodec.batteryLevel.decode([101]) }
        #expect(throws: CodecError.self) { try PayloadCodec.temperature.decode([0x00, 0x80]) }
        #expect(throws: CodecError.self) { try PayloadCodec.heartRateMeasurement.encode(payload: Array("72".utf8)) }
    }
}

/// SplitMix64: a small seeded generator, so the random inputs of a test run are the same every time.
struct SplitMix64: RandomNumberGenerator {
    private var state: UInt64

    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
