import BridgeCore
import Testing

/// Numbers from MQTT never trap, and a refused number names the range the codec accepts.
@Suite struct HostileNumberTests {
    private func encodeError(_ codec: String, _ payload: String) throws -> String? {
        let codec = try PayloadCodec(parsing: codec)
        do {
            _ = try codec.encode(payload: Array(payload.utf8))
            return nil
        } catch {
            return error.message
        }
    }

    static let hostileNumbers = [
        "1e-9223372036854775808", "1e9223372036854775807", "-1e-9223372036854775808", "1e+9223372036854775807",
        "1e-99999999999999999999999", "9223372036854775808", "-9223372036854775809", "18446744073709551616",
        "0." + String(repeating: "0", count: 5000) + "1", "1e", "1e-", "--1", "1.2.3", "+", "",
        String(repeating: "9", count: 400), "0e-64", "0e-65", "1e64", "1e65",
    ]

    static let numericCodecs = [
        "uint8", "int8", "uint16le", "int16be", "uint24le", "int32le", "uint64be", "int64le", "int16le*0.01",
        "uint8*0.5-40", "uint16be*2+1.5", "int64le*0.001+9223372036854775807", "float32le", "float64be",
        "battery_level", "temperature", "humidity",
    ]

    @Test(arguments: numericCodecs)
    func hostileNumbersNeverTrap(codec: String) throws {
        for number in Self.hostileNumbers {
            for payload in [number, #"{"value":\#(number.isEmpty ? "0" : number)}"#] {
                let command = try? SetCommand(payload: Array(payload.utf8))
                _ = try? PayloadCodec(parsing: codec).encode(payload: command?.value ?? [])
            }
        }
    }

    @Test func outOfRangeValuesNameTheRange() throws {
        #expect(try encodeError("uint8", "256") == #""256" is out of range for uint8 (0…255)"#)
        #expect(try encodeError("uint8", "-1") == #""-1" is out of range for uint8 (0…255)"#)
        #expect(
            try encodeError("uint8", "1e-9223372036854775808")
                == #""1e-9223372036854775808" is out of range for uint8 (0…255)"#)
        #expect(try encodeError("int16le*0.01", "400") == #""400" is out of range for int16le*0.01 (-327.68…327.67)"#)
        #expect(try encodeError("uint8*0.5-40", "90") == #""90" is out of range for uint8*0.5-40 (-40…87.5)"#)
        #expect(
            try encodeError("uint64le", "18446744073709551616")
                == #""18446744073709551616" is out of range for uint64le (0…18446744073709551615)"#)
        #expect(try encodeError("battery_level", "101") == #""101" is out of range for battery_level (0…100)"#)
        #expect(try encodeError("battery_level", "300") == #""300" is out of range for battery_level (0…100)"#)
        #expect(try encodeError("humidity", "100.01") == #""100.01" is out of range for humidity (0…100)"#)
        #expect(try encodeError("float32le", "1e39")?.contains("out of range for float32le") == true)
        #expect(try encodeError("uint8", "abc") == #""abc" is not a number (codec uint8 accepts 0…255)"#)
    }

    @Test func inRangeValuesStillEncode() throws {
        #expect(try PayloadCodec(parsing: "uint8").encode(payload: Array("255".utf8)) == [255])
        #expect(try PayloadCodec(parsing: "uint8").encode(payload: Array("2.55e2".utf8)) == [255])
        #expect(try PayloadCodec(parsing: "uint8").encode(payload: Array("0e-64".utf8)) == [0])
        #expect(try PayloadCodec(parsing: "int8").encode(payload: Array("-128".utf8)) == [0x80])
    }

    @Test func exponentsBeyondSixtyFourAreNotNumbers() {
        #expect(DecimalNumber("1e64") == DecimalNumber(significand: 1, exponent: 64))
        #expect(DecimalNumber("1e65") == nil)
        #expect(DecimalNumber("1e-9223372036854775808") == nil)
        #expect(DecimalNumber("1e+0009") == DecimalNumber(significand: 1, exponent: 9))
    }

    @Test func errorMessagesQuoteOnlyAnEscapedPrefix() throws {
        let long = "1\n2026-01-01 critical forged" + String(repeating: "x", count: 3000)
        let message = try #require(try encodeError("uint8", long))
        #expect(!message.contains("\n"))
        #expect(message.hasPrefix(#""1\n2026-01-01 critical forgedxxxx…" (3028 bytes)"#))
        #expect(message.utf8.count < 200)
    }
}
