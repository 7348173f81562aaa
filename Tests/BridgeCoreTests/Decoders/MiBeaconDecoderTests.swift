import BluetoothCore
import BridgeCore
import Foundation
import Testing

@Suite struct MiBeaconDecoderTests {
    let decoder = MiBeaconDecoder()

    func facts(_ hex: String, address: String) -> AdvertisementFacts { serviceFacts(0xFE95, hex, address: address) }

    /// xiaomi-ble's LYWSDCGQ example: version 5, MAC included, objects 0x100D (18.0 °C, 66.1 %) and 0x100A (59 %).
    @Test func unencryptedTemperatureHumidityAndBattery() throws {
        let decoded = try decoder.decode(
            facts("5020aa01a3bf2e3b342d580d1004b40095020a10013b", address: "58:2D:34:3B:2E:BF"),
            context: DecodingContext())
        #expect(decoded.format == .mibeacon)
        #expect(decoded.number("temperature") == 18.0)
        #expect(decoded.number("humidity") == 66.1)
        #expect(decoded.number("battery") == 59)
        #expect(decoded.packetID == 0xA3)
        #expect(decoded.measurement(named: "humidity")?.deviceClass == "humidity")
    }

    /// Theengs decoder's Mi Jia round sensor examples (version 2 frames).
    @Test func theengsRoundSensorFrames() throws {
        let combined = try decoder.decode(
            facts("5020aa0137dfaa33342d580d100404016602", address: "58:2D:34:33:AA:DF"),
            context: DecodingContext())
        #expect(combined.number("temperature") == 26.0)
        #expect(combined.number("humidity") == 61.4)
        let temperature = try decoder.decode(
            facts("5020aa018ddfaa33342d580410021201", address: "58:2D:34:33:AA:DF"),
            context: DecodingContext())
        #expect(temperature.number("temperature") == 27.4)
    }

    /// A version 2 frame without MAC carrying object 0x1001: button 1, long press.
    @Test func buttonObject() throws {
        let decoded = try decoder.decode(
            facts("4020aa01a3011003010002", address: "58:2D:34:3B:2E:BF"),
            context: DecodingContext())
        #expect(decoded.text("button") == "long_press")
        #expect(decoded.number("button_id") == 1)
    }

    @Test func aMACThatIsNotTheAdvertisersIsMalformed() {
        #expect(
            errorCode(decoder, facts("5020aa01a3bf2e3b342d580d1004b40095020a10013b", address: "58:2D:34:3B:2E:C0"))
                == .malformed)
    }

    @Test func aWronglySizedKnownObjectIsMalformedAndUnknownObjectsAreSkipped() throws {
        #expect(
            errorCode(decoder, facts("5020aa01a3bf2e3b342d580d1003b40095", address: "58:2D:34:3B:2E:BF"))
                == .malformed)
        let skipped = try decoder.decode(
            facts("5020aa01a3bf2e3b342d58aaaa0201020410020001", address: "58:2D:34:3B:2E:BF"),
            context: DecodingContext())
        #expect(skipped.measurements.map(\.name) == ["temperature"])
        #expect(skipped.number("temperature") == 25.6)
    }

    @Test func truncatedFramesAreTruncated() {
        for hex in [
            "", "5020", "5020aa01", "5020aa01a3bf2e3b", "5020aa01a3bf2e3b342d580d1004b400",
            "5020aa01a3bf2e3b342d580d10",
        ] {
            #expect(errorCode(decoder, facts(hex, address: "58:2D:34:3B:2E:BF")) == .truncated, "\(hex)")
        }
    }

    @Test func oldVersionsMeshAndLegacyEncryptionAreUnsupported() {
        #expect(errorCode(decoder, facts("2010aa01a3bf2e3b342d58", address: "58:2D:34:3B:2E:BF")) == .unsupported)
        #expect(errorCode(decoder, facts("d020aa01a3", address: "58:2D:34:3B:2E:BF")) == .unsupported)
        #expect(
            errorCode(
                decoder, facts("5830aa01a3bf2e3b342d580d1004b400950200000000000000", address: "58:2D:34:3B:2E:BF"))
                == .unsupported)
    }

    /// xiaomi-ble's LYWSD03MMC encrypted example (v5): the decoder builds the nonce from the address in packet
    /// order, the product id, the frame counter and the 3-byte extended counter, with additional data 0x11.
    @Test func encryptedV5FramesHandTheCipherTheSpecifiedNonce() throws {
        final class Recorder: @unchecked Sendable {
            // Written by the decoder's synchronous call and read after it returns, on the same thread.
            var nonce: [UInt8] = []
            var aad: [UInt8] = []
            var tag: [UInt8] = []
        }
        let recorder = Recorder()
        let context = DecodingContext(bindkey: Bindkey(hex: "e9ea895fac7cca6d30532432a516f3a8")) {
            _, _, nonce, tag, aad in
            recorder.nonce = Array(nonce)
            recorder.aad = Array(aad)
            recorder.tag = Array(tag)
            return bytes("061002cc01")
        }
        let decoded = try decoder.decode(
            facts(
                "58585b0550f483023 8c1a495ef58763c26000097e2abb5".replacingOccurrences(of: " ", with: ""),
                address: "A4:C1:38:02:83:F4"),
            context: context)
        #expect(recorder.nonce == bytes("f4830238c1a45b055026 0000".replacingOccurrences(of: " ", with: "")))
        #expect(recorder.aad == [0x11])
        #expect(recorder.tag == bytes("97e2abb5"))
        #expect(decoded.number("humidity") == 46.0)
        #expect(decoded.encryptionCounter == 0x0000_2650)
    }

    @Test func plainObjectsFromADeviceWithABindkeyAreRefusedAsNotEncrypted() {
        let context = DecodingContext(bindkey: Bindkey(hex: "e9ea895fac7cca6d30532432a516f3a8")) { c, _, _, _, _ in
            Array(c)
        }
        #expect(
            errorCode(
                decoder, facts("5020aa01a3bf2e3b342d580d1004b40095020a10013b", address: "58:2D:34:3B:2E:BF"),
                context: context) == .notEncrypted)
    }

    @Test func encryptedFramesWithoutKeyAreMissingKey() {
        #expect(
            errorCode(decoder, facts("58585b0550f4830238c1a495ef58763c26000097e2abb5", address: "A4:C1:38:02:83:F4"))
                == .missingKey)
    }
}
