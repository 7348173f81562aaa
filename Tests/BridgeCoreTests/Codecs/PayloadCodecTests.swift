import BridgeCore
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

    @Test(arguments: allNames)
    func decodersSurviveEveryShortAndHostileInput(name: String) throws {
        let codec = try PayloadCodec(parsing: name)
        var generator = SystemRandomNumberGenerator()
        for length in 0...24 {
            for pattern in [UInt8(0x00), 0xFF, 0x80, 0x7F] {
                _ = try? codec.decode([UInt8](repeating: pattern, count: length))
            }
            for _ in 0..<50 {
                _ = try? codec.decode((0..<length).map { _ in UInt8.random(in: 0...255, using: &generator) })
            }
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
