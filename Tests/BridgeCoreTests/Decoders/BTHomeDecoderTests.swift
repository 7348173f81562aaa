import BluetoothCore
import BridgeCore
import Testing

@Suite struct BTHomeDecoderTests {
    let decoder = BTHomeDecoder()

    func decode(_ hex: String, context: DecodingContext = DecodingContext()) throws -> DecodedAdvertisement {
        try decoder.decode(serviceFacts(0xFCD2, hex), context: context)
    }

    @Test func demoThermometerPacketYieldsPacketIDBatteryAndTemperature() throws {
        let decoded = try decode("400005015d029808")
        #expect(decoded.format == .bthome)
        #expect(decoded.packetID == 5)
        #expect(decoded.number("battery") == 93)
        #expect(decoded.number("temperature") == 22.0)
        let temperature = try #require(decoded.measurement(named: "temperature"))
        #expect(temperature.unit == "°C" && temperature.deviceClass == "temperature")
        #expect(temperature.stateClass == "measurement")
        #expect(decoded.measurement(named: "packet_id") == nil)
    }

    @Test func specificationTemperatureAndHumidityExample() throws {
        let decoded = try decode("4002ca0903bf13")
        #expect(decoded.number("temperature") == 25.06)
        #expect(decoded.number("humidity") == 50.55)
        #expect(decoded.packetID == nil)
    }

    /// The specification's example bytes per numeric object id, with the value each must read as.
    @Test(
        arguments: [
            ("0161", "battery", 97.0, "%"), ("02ca09", "temperature", 25.06, "°C"), ("03bf13", "humidity", 50.55, "%"),
            ("04138a01", "pressure", 1008.83, "hPa"), ("05138a14", "illuminance", 13460.67, "lx"),
            ("065e1f", "mass", 80.3, "kg"), ("073e1d", "mass", 74.86, "lb"), ("08ca06", "dewpoint", 17.38, "°C"),
            ("0960", "count", 96, nil), ("0a138a14", "energy", 1346.067, "kWh"), ("0b021b00", "power", 69.14, "W"),
            ("0c020c", "voltage", 3.074, "V"), ("0d120c", "pm2_5", 3090, "µg/m³"), ("0e021c", "pm10", 7170, "µg/m³"),
            ("12e204", "co2", 1250, "ppm"), ("133301", "tvoc", 307, "µg/m³"), ("14020c", "moisture", 30.74, "%"),
            ("2e23", "humidity", 35, "%"), ("2f23", "moisture", 35, "%"), ("3d0960", "count", 24585, nil),
            ("3e2a2c0960", "count", 1_611_213_866, nil), ("3f020c", "rotation", 307.4, "°"),
            ("400c00", "distance", 12, "mm"), ("414e00", "distance", 7.8, "m"), ("424e3400", "duration", 13.39, "s"),
            ("434e34", "current", 13.39, "A"), ("444e34", "speed", 133.9, "m/s"), ("451101", "temperature", 27.3, "°C"),
            ("4632", "uv_index", 5.0, nil), ("478756", "volume", 2215.1, "L"), ("48dc87", "volume", 34780, "mL"),
            ("49dc87", "volume_flow_rate", 34.78, "m³/h"), ("4a020c", "voltage", 307.4, "V"),
            ("4b138a14", "gas", 1346.067, "m³"), ("4c41018a01", "gas", 25821.505, "m³"),
            ("4d12138a14", "energy", 344_593.17, "kWh"), ("4e87562a01", "volume", 19551.879, "L"),
            ("4fdc870000", "water", 34.78, "L"), ("505d396164", "timestamp", 1_684_093_277, "s"),
            ("518756", "acceleration", 22.151, "m/s²"), ("528756", "gyroscope", 22.151, "°/s"),
            ("5587562a01", "volume_storage", 19551.879, "L"), ("56e803", "conductivity", 1000, "µS/cm"),
            ("57ea", "temperature", -22, "°C"), ("58ea", "temperature", -7.7, "°C"), ("59ea", "count", -22, nil),
            ("5aeaff", "count", -22, nil), ("5beaffffff", "count", -22, nil), ("5c021b0000", "power", 69.14, "W"),
            ("5db2cb", "current", -13.39, "A"), ("5e1027", "direction", 100, "°"),
            ("5f1027", "precipitation", 1000, "mm"), ("6003", "channel", 3, nil),
            ("61ac0d", "rotational_speed", 3500, "rpm"),
            ("624099dfff", "speed", -2.123456, "m/s"), ("630057d0ff", "acceleration", -3.123456, "m/s²"),
            ("6405", "light_level", 5, nil), ("f00100", "device_type_id", 1, nil),
        ] as [(String, String, Double, String?)])
    func numericObject(hex: String, name: String, value: Double, unit: String?) throws {
        let decoded = try decode("40" + hex)
        let measurement = try #require(decoded.measurement(named: name))
        #expect(measurement.value == .number(value))
        #expect(measurement.unit?.description == unit)
    }

    @Test func everyBinaryObjectReadsZeroAndOne() throws {
        // 0x12–0x14 between them are numeric (CO2, TVOC, moisture).
        for id in Array(UInt8(0x0F)...0x11) + Array(UInt8(0x15)...0x2D) {
            let hex = Hex.string([id])
            let on = try decode("40" + hex + "01")
            let off = try decode("40" + hex + "00")
            #expect(on.measurements.count == 1 && on.measurements.first?.value == .bool(true), "object \(hex)")
            #expect(off.measurements.first?.value == .bool(false), "object \(hex)")
            #expect(on.measurements.first?.stateClass == nil)
        }
        #expect(try decode("402101").measurement(named: "motion")?.deviceClass == "motion")
        #expect(try decode("402d00").bool("window") == false)
    }

    @Test func aBinaryObjectOtherThanZeroOrOneIsMalformed() {
        #expect(errorCode(decoder, serviceFacts(0xFCD2, "402102")) == .malformed)
    }

    @Test func textRawAndFirmwareObjects() throws {
        let decoded = try decode("40530c48656c6c6f20576f726c6421540348656c")
        #expect(decoded.text("text") == "Hello World!")
        #expect(decoded.text("raw") == "48656c")
        #expect(try decode("40f100010204").text("firmware_version") == "4.2.1.0")
        #expect(try decode("40f2000106").text("firmware_version") == "6.1.0")
    }

    @Test func buttonEventsOfEveryKind() throws {
        let expected: [(String, String)] = [
            ("00", "none"), ("01", "press"), ("02", "double_press"), ("03", "triple_press"), ("04", "long_press"),
            ("05", "long_double_press"), ("06", "long_triple_press"), ("80", "hold_press"),
        ]
        for (raw, event) in expected {
            #expect(try decode("403a" + raw).text("button") == event)
        }
        #expect(errorCode(decoder, serviceFacts(0xFCD2, "403a07")) == .malformed)
    }

    @Test func severalButtonsAreNumberedInOrder() throws {
        let decoded = try decode("4000013a013a003a04")
        #expect(decoded.measurements.map(\.name) == ["button", "button_2", "button_3"])
        #expect(decoded.text("button_3") == "long_press")
        #expect(decoded.packetID == 1)
    }

    @Test func dimmerEventsCarryDirectionAndSteps() throws {
        let left = try decode("403c0103")
        #expect(left.text("dimmer") == "rotate_left")
        #expect(left.number("dimmer_steps") == 3)
        #expect(try decode("403c0205").text("dimmer") == "rotate_right")
        #expect(errorCode(decoder, serviceFacts(0xFCD2, "403c0305")) == .malformed)
    }

    @Test func truncatedPacketsAreRefusedAsTruncated() {
        for hex in ["", "4002ca", "4002", "40530c4865", "403c01", "40f10001"] {
            #expect(errorCode(decoder, serviceFacts(0xFCD2, hex)) == .truncated, "\(hex)")
        }
    }

    @Test func otherVersionsAndUnknownLeadingObjectsAreUnsupported() {
        #expect(errorCode(decoder, serviceFacts(0xFCD2, "2002ca09")) == .unsupported)
        #expect(errorCode(decoder, serviceFacts(0xFCD2, "40ee01")) == .unsupported)
    }

    @Test func anUnknownObjectEndsThePacketKeepingEarlierValues() throws {
        let decoded = try decode("4002ca09ee0102")
        #expect(decoded.measurements.map(\.name) == ["temperature"])
    }

    @Test func anAdvertisementWithoutBTHomeServiceDataIsNotThisFormat() {
        #expect(errorCode(decoder, serviceFacts(0x181A, "4002ca09")) == .notThisFormat)
        #expect(!decoder.recognizes(serviceFacts(0x181A, "4002ca09")))
    }

    @Test func oversizedServiceDataIsRefusedBeforeParsing() {
        let facts = serviceFacts(0xFCD2, "40" + String(repeating: "0161", count: 200))
        #expect(errorCode(decoder, facts) == .tooLong)
    }
}

@Suite struct BTHomeEncryptionLayoutTests {
    /// The encryption example of bthome.io: key 231d39c1d7cc1ab1aee224cd096db932, address 54:48:E6:8F:80:A5,
    /// counter 00112233, plaintext 02ca0903bf13.
    let published = serviceFacts(0xFCD2, "41a47266c95f730011223378237214", address: "54:48:E6:8F:80:A5")
    let key = Bindkey(hex: "231d39c1d7cc1ab1aee224cd096db932")

    final class Recorder: @unchecked Sendable {
        // Written once by the decoder's synchronous call and read after it returns, on the same thread.
        var calls: [(ciphertext: [UInt8], key: [UInt8], nonce: [UInt8], tag: [UInt8], aad: [UInt8])] = []
    }

    @Test func theDecoderHandsTheCipherTheSpecifiedNonceTagAndCiphertext() throws {
        let recorder = Recorder()
        let context = DecodingContext(bindkey: key) { ciphertext, key, nonce, tag, aad in
            recorder.calls.append((Array(ciphertext), key, Array(nonce), Array(tag), Array(aad)))
            return bytes("02ca0903bf13")
        }
        let decoded = try BTHomeDecoder().decode(published, context: context)
        let call = try #require(recorder.calls.first)
        #expect(recorder.calls.count == 1)
        #expect(call.nonce == bytes("5448e68f80a5d2fc4100112233"))
        #expect(call.ciphertext == bytes("a47266c95f73"))
        #expect(call.tag == bytes("78237214"))
        #expect(call.aad.isEmpty)
        #expect(call.key == bytes("231d39c1d7cc1ab1aee224cd096db932"))
        #expect(decoded.number("temperature") == 25.06)
        #expect(decoded.number("humidity") == 50.55)
        #expect(decoded.encryptionCounter == 0x3322_1100)
    }

    @Test func withoutABindkeyAnEncryptedPacketIsMissingKey() {
        #expect(errorCode(BTHomeDecoder(), published) == .missingKey)
        let keyOnly = DecodingContext(bindkey: key)
        #expect(errorCode(BTHomeDecoder(), published, context: keyOnly) == .missingKey)
    }

    @Test func aCipherThatRefusesBecomesDecryptionFailed() {
        struct TagMismatch: Error {}
        let context = DecodingContext(bindkey: key) { _, _, _, _, _ in throw TagMismatch() }
        #expect(errorCode(BTHomeDecoder(), published, context: context) == .decryptionFailed)
    }

    @Test func anEncryptedPacketTooShortForCounterAndMICIsTruncated() {
        let context = DecodingContext(bindkey: key) { ciphertext, _, _, _, _ in Array(ciphertext) }
        #expect(errorCode(BTHomeDecoder(), serviceFacts(0xFCD2, "4100112233782372"), context: context) == .truncated)
    }

    @Test func aPlainPacketFromADeviceWithABindkeyIsRefusedAsNotEncrypted() {
        let context = DecodingContext(bindkey: key) { ciphertext, _, _, _, _ in Array(ciphertext) }
        let plain = serviceFacts(0xFCD2, "4002ca0903bf13", address: "54:48:E6:8F:80:A5")
        #expect(errorCode(BTHomeDecoder(), plain, context: context) == .notEncrypted)
    }

    @Test func aBindkeyNeverShowsInDescriptions() {
        let text = "\(key.map { String(describing: $0) } ?? "")"
        #expect(text == "Bindkey(redacted)")
        #expect(Bindkey(hex: "231d39") == nil)
    }
}
