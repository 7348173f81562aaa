/// Ruuvi data format 5 (RAWv2): manufacturer data of company 0x0499, 24 bytes, big-endian. A field holding its
/// "not available" value (such as 0x8000 for temperature) is left out of the measurements.
/// - SeeAlso: https://docs.ruuvi.com/communication/bluetooth-advertisements/data-format-5-rawv2
package struct RuuviRAWv2Decoder: AdvertisementDecoder {
    /// Each axis's measurement name and field label, literals: interpolated names made three strings on the heap for
    /// every advertisement.
    private static let accelerationAxes = [
        ("acceleration_x", "acceleration x"), ("acceleration_y", "acceleration y"),
        ("acceleration_z", "acceleration z"),
    ]

    package static let companyID: UInt16 = 0x0499

    package init() {}
    package var format: AdvertisementFormat { .ruuviRAWv2 }

    package func recognizes(_ facts: AdvertisementFacts) -> Bool {
        facts.manufacturerData(companyID: Self.companyID)?.first == 0x05
    }

    package func decode(
        _ facts: AdvertisementFacts, context: DecodingContext
    ) throws(DecoderError) -> DecodedAdvertisement {
        let data = try facts.boundedManufacturerData(companyID: Self.companyID, format: "Ruuvi")
        var reader = ByteReader(data, context: "Ruuvi RAWv2")
        let formatByte = try reader.uint8("data format")
        guard formatByte == 0x05 else {
            throw DecoderError(.unsupported, "Ruuvi: data format \(formatByte) (only 5, RAWv2, is decoded)")
        }
        guard data.count == 24 else {
            throw DecoderError(data.count < 24 ? .truncated : .tooLong, "Ruuvi RAWv2: \(data.count) bytes, not 24")
        }
        var measurements: [DecodedMeasurement] = []
        // At most nine: grown from empty, the array was made three times over.
        measurements.reserveCapacity(9)
        func add(
            _ name: String, _ value: Double, _ unit: LiteralText?, _ deviceClass: LiteralText?,
            stateClass: LiteralText? = "measurement"
        ) {
            measurements.append(
                DecodedMeasurement(
                    name: name, value: .number(value), unit: unit,
                    deviceClass: deviceClass, stateClass: stateClass))
        }
        let temperature = try reader.intBE(2, "temperature")
        if temperature != -0x8000 { add("temperature", scaled(Double(temperature), by: 0.005), "°C", "temperature") }
        let humidity = try reader.uintBE(2, "humidity")
        if humidity != 0xFFFF { add("humidity", scaled(Double(humidity), by: 0.0025), "%", "humidity") }
        let pressure = try reader.uintBE(2, "pressure")
        if pressure != 0xFFFF { add("pressure", scaled(Double(pressure) + 50_000, by: 0.01), "hPa", "pressure") }
        for (name, label) in Self.accelerationAxes {
            let acceleration = try reader.intBE(2, label)
            if acceleration != -0x8000 { add(name, scaled(Double(acceleration), by: 0.001), "g", nil) }
        }
        let power = try reader.uintBE(2, "power info")
        if power >> 5 != 0x7FF { add("voltage", scaled(Double(power >> 5) + 1600, by: 0.001), "V", "voltage") }
        if power & 0x1F != 0x1F {
            add("tx_power", Double(Int(power & 0x1F) * 2 - 40), "dBm", "signal_strength")
        }
        let movement = try reader.uint8("movement counter")
        if movement != 0xFF { add("movement_counter", Double(movement), nil, nil, stateClass: "total_increasing") }
        let sequence = try reader.uintBE(2, "measurement sequence")
        return DecodedAdvertisement(
            format: .ruuviRAWv2, measurements: measurements,
            packetID: sequence == 0xFFFF ? nil : sequence)
    }
}
