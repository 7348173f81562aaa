import AESCCM
import BluetoothCore
import BridgeCore
import Testing

/// The decoders with the real cipher, on the published encrypted examples and their keys.
@Suite struct EncryptedAdvertisementTests {
    static func context(_ key: String) -> DecodingContext {
        DecodingContext(bindkey: Bindkey(hex: key), openAESCCM: AESCCM.open(ciphertext:key:nonce:tag:additionalData:))
    }

    static func facts(_ uuid16: UInt16, _ payload: String, address: String) -> AdvertisementFacts {
        AdvertisementFacts(
            address: BluetoothAddress(address)!, serviceData: [BluetoothUUID(uuid16: uuid16): hex(payload)])
    }

    /// bthome.io's encryption example, as bthome-ble's tests advertise it from 54:48:E6:8F:80:A5.
    let bthome = facts(0xFCD2, "41a47266c95f730011223378237214", address: "54:48:E6:8F:80:A5")

    @Test func bthomePublishedEncryptedExampleDecodes() throws {
        let decoded = try BTHomeDecoder().decode(bthome, context: Self.context("231d39c1d7cc1ab1aee224cd096db932"))
        #expect(decoded.measurement(named: "temperature")?.value == .number(25.06))
        #expect(decoded.measurement(named: "humidity")?.value == .number(50.55))
        #expect(decoded.encryptionCounter == 0x3322_1100)
    }

    @Test func bthomeWithAWrongKeyIsDecryptionFailed() {
        #expect(
            throws: DecoderError(.decryptionFailed, "BTHome payload did not authenticate: wrong bindkey or altered")
        ) {
            try BTHomeDecoder().decode(bthome, context: Self.context("814aac74c4f17b6c1581e1ab87816b99"))
        }
    }

    @Test func bthomeFromAnotherAddressIsDecryptionFailed() {
        let moved = Self.facts(0xFCD2, "41a47266c95f730011223378237214", address: "54:48:E6:8F:80:A6")
        #expect(throws: DecoderError.self) {
            try BTHomeDecoder().decode(moved, context: Self.context("231d39c1d7cc1ab1aee224cd096db932"))
        }
    }

    /// xiaomi-ble's LYWSD03MMC MiBeacon v5 example with its bindkey: object 0x1006 holding 467, humidity 46.7 %
    /// (xiaomi-ble shows it truncated to 46 for this model's display; Gattway keeps the sensor's resolution).
    let mibeacon = facts(0xFE95, "58585b0550f4830238c1a495ef58763c26000097e2abb5", address: "A4:C1:38:02:83:F4")

    @Test func mibeaconPublishedEncryptedExampleDecodes() throws {
        let decoded = try MiBeaconDecoder().decode(mibeacon, context: Self.context("e9ea895fac7cca6d30532432a516f3a8"))
        #expect(decoded.measurements.map(\.name) == ["humidity"])
        #expect(decoded.measurement(named: "humidity")?.value == .number(46.7))
    }

    @Test func mibeaconWithAWrongKeyOrAlteredMICIsDecryptionFailed() {
        let wrongKey = Self.context("b2cf9a553d53571b5657defd582d676e")
        #expect(throws: DecoderError.self) { try MiBeaconDecoder().decode(mibeacon, context: wrongKey) }
        let altered = Self.facts(0xFE95, "58585b0550f4830238c1a495ef58763c26000097e2abb6", address: "A4:C1:38:02:83:F4")
        do {
            _ = try MiBeaconDecoder().decode(altered, context: Self.context("e9ea895fac7cca6d30532432a516f3a8"))
            Issue.record("an altered MIC decoded")
        } catch {
            #expect(error.code == .decryptionFailed)
        }
    }
}
