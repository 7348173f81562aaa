import BluetoothCore

/// Inkbird IBS-TH1/TH2: the local name `sps` (or `tps`) and manufacturer data whose "company id" field is really
/// the temperature (sint16 LE, 0.01 °C), followed by 7 bytes: humidity uint16 LE in 0.01 % (0 or 0xFFFF from
/// models without a humidity sensor, so both are left out), external probe flag, a 2-byte checksum, battery %,
/// sensor type.
package struct InkbirdIBSTHDecoder: AdvertisementDecoder {
    private static let names: Set<String> = ["sps", "tps"]

    package init() {}
    package var format: AdvertisementFormat { .inkbirdIBSTH }

    package func recognizes(_ facts: AdvertisementFacts) -> Bool {
        guard let name = facts.localName, Self.names.contains(name), facts.manufacturerData.count == 1 else {
            return false
        }
        return facts.manufacturerData.first?.value.count == 7
    }

    package func decode(
        _ facts: AdvertisementFacts, context: DecodingContext
    ) throws(DecoderError) -> DecodedAdvertisement {
        guard facts.manufacturerData.count == 1, let (temperatureField, data) = facts.manufacturerData.first else {
            throw DecoderError(
                .notThisFormat,
                "Inkbird: needs exactly one manufacturer data entry, found \(facts.manufacturerData.count)")
        }
        guard data.count == 7 else {
            throw DecoderError(data.count < 7 ? .truncated : .tooLong, "Inkbird IBS-TH: \(data.count) bytes, not 7")
        }
        var reader = ByteReader(data, context: "Inkbird IBS-TH")
        let humidity = try reader.uintLE(2, "humidity")
        let probe = try reader.uint8("external probe")
        try reader.skip(2, "checksum")
        let battery = try reader.uint8("battery")
        guard probe <= 1, battery <= 100 else {
            throw DecoderError(.malformed, "Inkbird IBS-TH: probe flag \(probe) or battery \(battery) out of range")
        }
        var measurements: [DecodedMeasurement] = []
        // At most four: grown from one, the list was made three times over.
        measurements.reserveCapacity(4)
        measurements.append(
            DecodedMeasurement(
                name: "temperature",
                value: .number(scaled(Double(Int16(bitPattern: temperatureField)), by: 0.01)),
                unit: "°C", deviceClass: "temperature", stateClass: "measurement"))
        if humidity != 0xFFFF, humidity != 0 {
            measurements.append(
                DecodedMeasurement(
                    name: "humidity", value: .number(scaled(Double(humidity), by: 0.01)),
                    unit: "%", deviceClass: "humidity", stateClass: "measurement"))
        }
        measurements.append(DecodedMeasurement(name: "external_probe", value: .bool(probe == 1)))
        measurements.append(
            DecodedMeasurement(
                name: "battery", value: .number(Double(battery)), unit: "%",
                deviceClass: "battery", stateClass: "measurement"))
        return DecodedAdvertisement(format: .inkbirdIBSTH, measurements: measurements)
    }
}
