import BridgeCore
import Testing

@Suite struct HeartRateMeasurementTests {
    private func decode(_ bytes: [UInt8]) throws -> String {
        String(decoding: try PayloadCodec.heartRateMeasurement.decode(bytes), as: UTF8.self)
    }

    @Test func decodesAnEightBitRateWithoutExtras() throws {
        #expect(try decode([0x00, 72]) == #"{"bpm":72}"#)
    }

    @Test func decodesEveryOptionalField() throws {
        // flags: 16-bit rate, contact supported + detected, energy, RR intervals
        let bytes: [UInt8] = [0x1F, 0x2C, 0x01, 0x78, 0x00, 0x40, 0x03, 0x00, 0x04]
        #expect(
            try decode(bytes) == #"{"bpm":300,"sensor_contact":true,"energy_expended":120,"rr_intervals":[0.8125,1.0]}"#
        )
    }

    @Test func reportsLostContactOnlyWhenSupported() throws {
        #expect(try decode([0x04, 60]) == #"{"bpm":60,"sensor_contact":false}"#)
        #expect(try decode([0x02, 60]) == #"{"bpm":60}"#)
    }

    @Test func truncatedValuesAreErrorsNotGarbage() {
        #expect(throws: CodecError.self) { try decode([]) }
        #expect(throws: CodecError.self) { try decode([0x01, 0x2C]) }
        #expect(throws: CodecError.self) { try decode([0x08, 60, 0x78]) }
        #expect(throws: CodecError.self) { try decode([0x10, 60, 0x40]) }
    }
}
