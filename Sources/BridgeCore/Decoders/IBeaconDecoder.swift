import BluetoothCore

/// Apple iBeacon: manufacturer data of company 0x004C, type 0x02, length 0x15, then a 16-byte proximity UUID,
/// major and minor (uint16 BE) and the calibrated power at 1 m (sint8 dBm).
package struct IBeaconDecoder: AdvertisementDecoder {
    package static let companyID: UInt16 = 0x004C

    package init() {}
    package var format: AdvertisementFormat { .iBeacon }

    package func recognizes(_ facts: AdvertisementFacts) -> Bool {
        guard let data = facts.manufacturerData(companyID: Self.companyID), data.count >= 2 else { return false }
        return data[0] == 0x02 && data[1] == 0x15
    }

    package func decode(
        _ facts: AdvertisementFacts, context: DecodingContext
    ) throws(DecoderError) -> DecodedAdvertisement {
        let data = try facts.boundedManufacturerData(companyID: Self.companyID, format: "iBeacon")
        var reader = ByteReader(data, context: "iBeacon")
        let type = try reader.uint8("type")
        let length = try reader.uint8("length")
        guard type == 0x02, length == 0x15 else {
            throw DecoderError(
                .unsupported, "Apple manufacturer data of type 0x\(String(type, radix: 16)) is not an iBeacon")
        }
        guard data.count == 23 else {
            throw DecoderError(data.count < 23 ? .truncated : .tooLong, "iBeacon: \(data.count) bytes, not 23")
        }
        var dashedDigits = Hex.encode(try reader.bytes(16, for: "proximity UUID"))
        for offset in [20, 16, 12, 8] { dashedDigits.insert(UInt8(ascii: "-"), at: offset) }
        let dashed = String(decoding: dashedDigits, as: UTF8.self)
        let major = try reader.uintBE(2, "major")
        let minor = try reader.uintBE(2, "minor")
        let power = try reader.intBE(1, "measured power")
        return DecodedAdvertisement(
            format: .iBeacon,
            measurements: [
                DecodedMeasurement(name: "uuid", value: .text(dashed)),
                DecodedMeasurement(name: "major", value: .number(Double(major))),
                DecodedMeasurement(name: "minor", value: .number(Double(minor))),
                DecodedMeasurement(
                    name: "measured_power", value: .number(Double(power)), unit: "dBm",
                    deviceClass: "signal_strength"),
            ])
    }
}
