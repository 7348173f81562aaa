/// Govee H5075 and H5072 thermo-hygrometers: manufacturer data of company 0xEC88, 6 bytes: a zero byte, one
/// 24-bit big-endian number packing temperature and humidity (bit 23 the temperature's sign; the rest is
/// temperature × 10 000 + humidity × 10, with temperature in 0.1 °C steps), battery %, a zero byte.
package struct GoveeH5075Decoder: AdvertisementDecoder {
    package static let companyID: UInt16 = 0xEC88

    package init() {}
    package var format: AdvertisementFormat { .goveeH5075 }

    /// The H5074 shares the company id with a 7-byte layout, so the length is part of the marker.
    package func recognizes(_ facts: AdvertisementFacts) -> Bool {
        facts.manufacturerDataCount(companyID: Self.companyID) == 6
    }

    package func decode(
        _ facts: AdvertisementFacts, context: DecodingContext
    ) throws(DecoderError) -> DecodedAdvertisement {
        let data = try facts.boundedManufacturerData(companyID: Self.companyID, format: "Govee")
        guard data.count == 6 else {
            throw DecoderError(data.count < 6 ? .truncated : .tooLong, "Govee H5075: \(data.count) bytes, not 6")
        }
        var reader = ByteReader(data, context: "Govee H5075")
        try reader.skip(1, "reserved")
        let packed = try reader.uintBE(3, "temperature and humidity")
        let battery = try reader.uint8("battery")
        let magnitude = packed & 0x7F_FFFF
        let sign: Double = packed & 0x80_0000 != 0 ? -1 : 1
        guard battery <= 100 else {
            throw DecoderError(.malformed, "Govee H5075: battery \(battery) % is out of range")
        }
        let temperature = sign * scaled(Double(magnitude / 1000), by: 0.1)
        let humidity = scaled(Double(magnitude % 1000), by: 0.1)
        return DecodedAdvertisement(
            format: .goveeH5075,
            measurements: [
                DecodedMeasurement(
                    name: "temperature", value: .number(temperature), unit: "°C",
                    deviceClass: "temperature", stateClass: "measurement"),
                DecodedMeasurement(
                    name: "humidity", value: .number(humidity), unit: "%", deviceClass: "humidity",
                    stateClass: "measurement"),
                DecodedMeasurement(
                    name: "battery", value: .number(Double(battery)), unit: "%", deviceClass: "battery",
                    stateClass: "measurement"),
            ])
    }
}
