/// SwitchBot Meter and Meter Plus: service data under UUID 0xFD3D (older firmware: 0x0D00), 6 bytes: device type
/// (`T` Meter, `i` Meter Plus; top bit a flag), a status byte, battery % (7 bits), temperature tenths (low 4 bits),
/// temperature degrees (7 bits, top bit set when above zero), humidity % (7 bits; top bit the display unit).
package struct SwitchBotMeterDecoder: AdvertisementDecoder {
    package static let serviceUUIDs16: [UInt16] = [0xFD3D, 0x0D00]
    private static let deviceTypes: Set<UInt8> = [0x54, 0x69]

    package init() {}
    package var format: AdvertisementFormat { .switchBotMeter }

    package func recognizes(_ facts: AdvertisementFacts) -> Bool {
        guard let data = Self.serviceData(facts), let type = data.first else { return false }
        return Self.deviceTypes.contains(type & 0x7F)
    }

    private static func serviceData(_ facts: AdvertisementFacts) -> [UInt8]? {
        // A loop, not `lazy.compactMap`: its closure copied the facts (five retains and releases) for every
        // advertisement a decoder set to `auto` looks at.
        for uuid in serviceUUIDs16 {
            if let data = facts.serviceData(uuid16: uuid) { return data }
        }
        return nil
    }

    package func decode(
        _ facts: AdvertisementFacts, context: DecodingContext
    ) throws(DecoderError) -> DecodedAdvertisement {
        guard let data = Self.serviceData(facts) else {
            throw DecoderError(.notThisFormat, "no SwitchBot service data (UUID 0xfd3d or 0x0d00)")
        }
        guard data.count <= AdvertisementFacts.maximumPayloadLength else {
            throw DecoderError(.tooLong, "SwitchBot service data is \(data.count) bytes")
        }
        var reader = ByteReader(data, context: "SwitchBot Meter")
        let type = try reader.uint8("device type") & 0x7F
        guard Self.deviceTypes.contains(type) else {
            throw DecoderError(.unsupported, "SwitchBot: device type 0x\(String(type, radix: 16)) is not a Meter")
        }
        try reader.skip(1, "status")
        let battery = try reader.uint8("battery") & 0x7F
        let tenths = try reader.uint8("temperature tenths") & 0x0F
        let degrees = try reader.uint8("temperature")
        let humidity = try reader.uint8("humidity") & 0x7F
        guard tenths <= 9, battery <= 100, humidity <= 100 else {
            throw DecoderError(.malformed, "SwitchBot: a reading is out of range")
        }
        let magnitude = Double(degrees & 0x7F) + Double(tenths) / 10
        let temperature = degrees & 0x80 != 0 ? magnitude : -magnitude
        return DecodedAdvertisement(
            format: .switchBotMeter,
            measurements: [
                DecodedMeasurement(
                    name: "temperature", value: .number(temperature), unit: "°C",
                    deviceClass: "temperature", stateClass: "measurement"),
                DecodedMeasurement(
                    name: "humidity", value: .number(Double(humidity)), unit: "%", deviceClass: "humidity",
                    stateClass: "measurement"),
                DecodedMeasurement(
                    name: "battery", value: .number(Double(battery)), unit: "%", deviceClass: "battery",
                    stateClass: "measurement"),
            ])
    }
}
