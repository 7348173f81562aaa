import BluetoothCore
import BridgeCore
import Testing

/// Example packets from Theengs decoder's and the formats' published examples.
@Suite struct EnvironmentSensing181ATests {
    @Test func pvvxCustomFormat() throws {
        let decoded = try PVVXDecoder().decode(
            serviceFacts(0x181A, "dc3312342d582f09aa173d0b4b7c05"),
            context: DecodingContext())
        #expect(decoded.number("temperature") == 23.51)
        #expect(decoded.number("humidity") == 60.58)
        #expect(decoded.number("voltage") == 2.877)
        #expect(decoded.number("battery") == 75)
        #expect(decoded.packetID == 0x7C)
        #expect(
            try PVVXDecoder().decode(serviceFacts(0x181A, "5601cf38c1a462fdbd13470c64cc0f"), context: DecodingContext())
                .number("temperature") == -6.7)
    }

    @Test func atc1441Format() throws {
        let decoded = try ATC1441Decoder().decode(
            serviceFacts(0x181A, "582d341233dc00e03e490b2c2e"),
            context: DecodingContext())
        #expect(decoded.number("temperature") == 22.4)
        #expect(decoded.number("humidity") == 62)
        #expect(decoded.number("battery") == 73)
        #expect(decoded.number("voltage") == 2.86)
        #expect(decoded.packetID == 0x2E)
        #expect(
            try ATC1441Decoder().decode(serviceFacts(0x181A, "a4c138d5d498ffd33e510b7b01"), context: DecodingContext())
                .number("temperature") == -4.5)
    }

    @Test func autoTellsTheTwoApartByLength() throws {
        #expect(
            try DecoderSelection.auto.decode(
                serviceFacts(0x181A, "582d341233dc00e03e490b2c2e"),
                context: DecodingContext())?.format == .atc1441)
        #expect(
            try DecoderSelection.auto.decode(
                serviceFacts(0x181A, "dc3312342d582f09aa173d0b4b7c05"),
                context: DecodingContext())?.format == .pvvx)
    }

    @Test func wrongLengthsAreRefused() {
        #expect(errorCode(PVVXDecoder(), serviceFacts(0x181A, "dc3312342d582f09aa173d0b4b7c")) == .truncated)
        #expect(errorCode(ATC1441Decoder(), serviceFacts(0x181A, "582d341233dc00e03e490b2c2e00")) == .tooLong)
        #expect(errorCode(ATC1441Decoder(), serviceFacts(0xFCD2, "582d341233dc00e03e490b2c2e")) == .notThisFormat)
    }
}

@Suite struct RuuviRAWv2DecoderTests {
    /// The valid, maximum, minimum and invalid vectors of Ruuvi's data format 5 specification.
    @Test func specificationValidVector() throws {
        let decoded = try RuuviRAWv2Decoder().decode(
            manufacturerFacts(0x0499, "0512fc5394c37c0004fffc040cac364200cdcbb8334c884f"), context: DecodingContext())
        #expect(decoded.number("temperature") == 24.3)
        #expect(decoded.number("humidity") == 53.49)
        #expect(decoded.number("pressure") == 1000.44)
        #expect(decoded.number("acceleration_x") == 0.004)
        #expect(decoded.number("acceleration_y") == -0.004)
        #expect(decoded.number("acceleration_z") == 1.036)
        #expect(decoded.number("voltage") == 2.977)
        #expect(decoded.number("tx_power") == 4)
        #expect(decoded.number("movement_counter") == 66)
        #expect(decoded.packetID == 205)
    }

    @Test func specificationMaximumAndMinimumVectors() throws {
        let maximum = try RuuviRAWv2Decoder().decode(
            manufacturerFacts(0x0499, "057ffffffefffe7fff7fff7fffffdefefffecbb8334c884f"), context: DecodingContext())
        #expect(maximum.number("temperature") == 163.835)
        #expect(maximum.number("humidity") == 163.835)
        #expect(maximum.number("pressure") == 1155.34)
        #expect(maximum.number("acceleration_z") == 32.767)
        #expect(maximum.number("voltage") == 3.646)
        #expect(maximum.number("tx_power") == 20)
        #expect(maximum.packetID == 65534)
        let minimum = try RuuviRAWv2Decoder().decode(
            manufacturerFacts(0x0499, "058001000000008001800180010000000000cbb8334c884f"), context: DecodingContext())
        #expect(minimum.number("temperature") == -163.835)
        #expect(minimum.number("pressure") == 500)
        #expect(minimum.number("voltage") == 1.6)
        #expect(minimum.number("tx_power") == -40)
    }

    @Test func specificationInvalidVectorLeavesEveryValueOut() throws {
        let invalid = try RuuviRAWv2Decoder().decode(
            manufacturerFacts(0x0499, "058000ffffffff800080008000ffffffffffffffffffffff"), context: DecodingContext())
        #expect(invalid.measurements.isEmpty)
        #expect(invalid.packetID == nil)
    }

    @Test func otherFormatsAndLengthsAreRefused() {
        #expect(
            errorCode(RuuviRAWv2Decoder(), manufacturerFacts(0x0499, "03291a1ece1efc18f94202ca0b53")) == .unsupported)
        #expect(errorCode(RuuviRAWv2Decoder(), manufacturerFacts(0x0499, "0512fc5394")) == .truncated)
        #expect(errorCode(RuuviRAWv2Decoder(), manufacturerFacts(0x0499, "")) == .truncated)
    }
}

@Suite struct GoveeH5075DecoderTests {
    @Test func theengsExamples() throws {
        let warm = try GoveeH5075Decoder().decode(manufacturerFacts(0xEC88, "000418ee6400"), context: DecodingContext())
        #expect(warm.number("temperature") == 26.8)
        #expect(warm.number("humidity") == 52.6)
        #expect(warm.number("battery") == 100)
        let h5072 = try GoveeH5075Decoder().decode(
            manufacturerFacts(0xEC88, "0004344b6400"), context: DecodingContext())
        #expect(h5072.number("temperature") == 27.5)
        #expect(h5072.number("humidity") == 53.1)
    }

    /// Bit 23 is the sign; the temperature keeps its 0.1 °C resolution (-7.3, humidity 48.1 %).
    @Test func negativeTemperature() throws {
        let cold = try GoveeH5075Decoder().decode(manufacturerFacts(0xEC88, "00811f096400"), context: DecodingContext())
        #expect(cold.number("temperature") == -7.3)
        #expect(cold.number("humidity") == 48.1)
    }

    @Test func refusals() {
        #expect(errorCode(GoveeH5075Decoder(), manufacturerFacts(0xEC88, "000418ee")) == .truncated)
        #expect(errorCode(GoveeH5075Decoder(), manufacturerFacts(0xEC88, "000418eec800")) == .malformed)
        #expect(!GoveeH5075Decoder().recognizes(manufacturerFacts(0xEC88, "000c094a1d6402")))
    }
}

@Suite struct SwitchBotMeterDecoderTests {
    @Test func meterPlusAndMeterExamples() throws {
        let plus = try SwitchBotMeterDecoder().decode(serviceFacts(0xFD3D, "6900ba18993b"), context: DecodingContext())
        #expect(plus.number("temperature") == 25.8)
        #expect(plus.number("humidity") == 59)
        #expect(plus.number("battery") == 58)
        let frost = try SwitchBotMeterDecoder().decode(serviceFacts(0xFD3D, "6900ba031938"), context: DecodingContext())
        #expect(frost.number("temperature") == -25.3)
        let meter = try SwitchBotMeterDecoder().decode(serviceFacts(0x0D00, "540054459938"), context: DecodingContext())
        #expect(meter.number("temperature") == 25.5)
        #expect(meter.number("humidity") == 56)
        #expect(meter.number("battery") == 84)
    }

    @Test func refusals() {
        #expect(errorCode(SwitchBotMeterDecoder(), serviceFacts(0xFD3D, "6900ba18")) == .truncated)
        #expect(errorCode(SwitchBotMeterDecoder(), serviceFacts(0xFD3D, "4800ba18993b")) == .unsupported)
        #expect(errorCode(SwitchBotMeterDecoder(), serviceFacts(0xFD3D, "6900ba1a993b")) == .malformed)
    }
}

@Suite struct InkbirdIBSTHDecoderTests {
    func facts(_ hex: String, name: String = "sps") -> AdvertisementFacts {
        let all = bytes(hex)
        guard all.count >= 2 else { return manufacturerFacts(0, "", name: name) }
        return AdvertisementFacts(
            address: address("49:42:08:00:00:01"),
            manufacturerData: [UInt16(all[0]) | UInt16(all[1]) << 8: Array(all[2...])],
            localName: name)
    }

    @Test func theengsExamples() throws {
        let room = try InkbirdIBSTHDecoder().decode(facts("660a03150010805908"), context: DecodingContext())
        #expect(room.number("temperature") == 26.62)
        #expect(room.number("humidity") == 53.79)
        #expect(room.bool("external_probe") == false)
        #expect(room.number("battery") == 89)
        let probe = try InkbirdIBSTHDecoder().decode(facts("f009fe1301ca893008"), context: DecodingContext())
        #expect(probe.bool("external_probe") == true)
        #expect(probe.number("temperature") == 25.44)
        let frost = try InkbirdIBSTHDecoder().decode(
            facts("76fb00000010805908", name: "tps"), context: DecodingContext())
        #expect(frost.number("temperature") == -11.62)
        #expect(frost.measurement(named: "humidity") == nil)
        let noHumidity = try InkbirdIBSTHDecoder().decode(
            facts("840affff00a6066008", name: "tps"),
            context: DecodingContext())
        #expect(noHumidity.measurement(named: "humidity") == nil)
        #expect(noHumidity.number("temperature") == 26.92)
    }

    @Test func recognisedOnlyByNameAndLength() {
        #expect(InkbirdIBSTHDecoder().recognizes(facts("660a03150010805908")))
        #expect(!InkbirdIBSTHDecoder().recognizes(facts("660a03150010805908", name: "other")))
        #expect(errorCode(InkbirdIBSTHDecoder(), facts("660a031500")) == .truncated)
    }
}

@Suite struct BeaconDecoderTests {
    @Test func iBeaconTheengsExample() throws {
        let decoded = try IBeaconDecoder().decode(
            manufacturerFacts(0x004C, "0215426c7565436861726d426561636f6e730efe1355c5"), context: DecodingContext())
        #expect(decoded.text("uuid") == "426c7565-4368-6172-6d42-6561636f6e73")
        #expect(decoded.number("major") == 3838)
        #expect(decoded.number("minor") == 4949)
        #expect(decoded.number("measured_power") == -59)
        #expect(errorCode(IBeaconDecoder(), manufacturerFacts(0x004C, "0215426c75")) == .truncated)
        #expect(errorCode(IBeaconDecoder(), manufacturerFacts(0x004C, "1005031c6e1f59")) == .unsupported)
    }

    @Test func eddystoneUID() throws {
        let decoded = try EddystoneDecoder().decode(
            serviceFacts(0xFEAA, "00e800112233445566778899aabbccddeeff0000"), context: DecodingContext())
        #expect(decoded.number("tx_power") == -24)
        #expect(decoded.text("namespace") == "00112233445566778899")
        #expect(decoded.text("instance") == "aabbccddeeff")
    }

    @Test func eddystoneURLExpandsSchemeAndSuffixes() throws {
        // https://www. + "gattway" + ".com/" + "x"
        let decoded = try EddystoneDecoder().decode(
            serviceFacts(0xFEAA, "10eb016761747477617900" + "78"),
            context: DecodingContext())
        #expect(decoded.text("url") == "https://www.gattway.com/x")
        #expect(errorCode(EddystoneDecoder(), serviceFacts(0xFEAA, "10eb0567")) == .malformed)
        #expect(errorCode(EddystoneDecoder(), serviceFacts(0xFEAA, "10eb01677f")) == .malformed)
    }

    @Test func eddystoneTelemetry() throws {
        // 3000 mV, 25.5 °C (0x1980), 1000 advertisements, 360.0 s
        let decoded = try EddystoneDecoder().decode(
            serviceFacts(0xFEAA, "20000bb81980000003e800000e10"),
            context: DecodingContext())
        #expect(decoded.number("voltage") == 3.0)
        #expect(decoded.number("temperature") == 25.5)
        #expect(decoded.number("advertisement_count") == 1000)
        #expect(decoded.number("uptime") == 360.0)
        #expect(errorCode(EddystoneDecoder(), serviceFacts(0xFEAA, "20010bb8")) == .unsupported)
        #expect(errorCode(EddystoneDecoder(), serviceFacts(0xFEAA, "20000bb819")) == .truncated)
        #expect(errorCode(EddystoneDecoder(), serviceFacts(0xFEAA, "30")) == .unsupported)
    }
}

@Suite struct DecoderSelectionTests {
    @Test func autoChoosesByServiceUUIDOrCompanyID() throws {
        let bthome = try DecoderSelection.auto.decode(serviceFacts(0xFCD2, "4002ca09"), context: DecodingContext())
        #expect(bthome?.format == .bthome)
        let ruuvi = try DecoderSelection.auto.decode(
            manufacturerFacts(0x0499, "0512fc5394c37c0004fffc040cac364200cdcbb8334c884f"), context: DecodingContext())
        #expect(ruuvi?.format == .ruuviRAWv2)
        #expect(try DecoderSelection.auto.decode(manufacturerFacts(0x1234, "00"), context: DecodingContext()) == nil)
    }

    /// A company's data is found first or after others: a format is found by its company either way, and not found
    /// when its company is missing.
    @Test func aCompanyIsFoundAmongSeveral() throws {
        let ruuviData = bytes("0512fc5394c37c0004fffc040cac364200cdcbb8334c884f")
        for others in [[:], [0x004C: bytes("1005")], [0x004C: bytes("1005"), 0x0006: bytes("01")]]
            as [AdvertisedEntries<UInt16>]
        {
            var data = others
            data[0x0499] = ruuviData
            let facts = AdvertisementFacts(address: address("A4:C1:38:00:00:01"), manufacturerData: data)
            #expect(facts.manufacturerData(companyID: 0x0499) == ruuviData)
            #expect(facts.manufacturerData(companyID: 0x0498) == nil)
            let decoded = try DecoderSelection.auto.decode(facts, context: DecodingContext())
            #expect(decoded?.format == .ruuviRAWv2, "beside \(others.count) other companies")
            let without = AdvertisementFacts(address: address("A4:C1:38:00:00:01"), manufacturerData: others)
            #expect(without.manufacturerData(companyID: 0x0499) == nil)
        }
    }

    @Test func noneAndAnExplicitFormat() throws {
        #expect(try DecoderSelection.none.decode(serviceFacts(0xFCD2, "4002ca09"), context: DecodingContext()) == nil)
        #expect(throws: DecoderError.self) {
            try DecoderSelection.format(.mibeacon).decode(serviceFacts(0xFCD2, "4002ca09"), context: DecodingContext())
        }
    }

    @Test func parsesTheConfigurationNames() {
        #expect(DecoderSelection("auto") == .auto)
        #expect(DecoderSelection("none") == DecoderSelection.none)
        #expect(DecoderSelection("bthome") == .format(.bthome))
        #expect(DecoderSelection("ruuvi_rawv2") == .format(.ruuviRAWv2))
        #expect(DecoderSelection("BTHome") == nil)
    }
}
