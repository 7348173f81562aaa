import BluetoothCore

/// The custom thermometer firmware formats (pvvx and ATC1441) sent as service data under the Environmental Sensing
/// UUID 0x181A; they are told apart by length: 15 bytes for pvvx, 13 for ATC1441.
enum EnvironmentSensing181A {
    static let serviceUUID16: UInt16 = 0x181A

    static func payload(_ facts: AdvertisementFacts, length: Int, format: String) throws(DecoderError) -> [UInt8] {
        let data = try facts.boundedServiceData(uuid16: serviceUUID16, format: format)
        guard data.count >= length else {
            throw DecoderError(.truncated, "\(format): \(data.count) bytes, the format has \(length)")
        }
        guard data.count == length else {
            throw DecoderError(.tooLong, "\(format): \(data.count) bytes, the format has \(length)")
        }
        return data
    }

    static func measurements(
        temperature: Double, humidity: Double, batteryPercent: UInt8, batteryMillivolts: UInt32
    ) -> [DecodedMeasurement] {
        [
            DecodedMeasurement(
                name: "temperature", value: .number(temperature), unit: "°C",
                deviceClass: "temperature", stateClass: "measurement"),
            DecodedMeasurement(
                name: "humidity", value: .number(humidity), unit: "%", deviceClass: "humidity",
                stateClass: "measurement"),
            DecodedMeasurement(
                name: "battery", value: .number(Double(batteryPercent)), unit: "%",
                deviceClass: "battery", stateClass: "measurement"),
            DecodedMeasurement(
                name: "voltage", value: .number(scaled(Double(batteryMillivolts), by: 0.001)),
                unit: "V", deviceClass: "voltage", stateClass: "measurement"),
        ]
    }
}

/// pvvx custom format: MAC (least significant byte first), temperature sint16 LE in 0.01 °C, humidity uint16 LE
/// in 0.01 %, battery uint16 LE in mV, battery %, frame counter, flags. 15 bytes.
/// - SeeAlso: https://github.com/pvvx/ATC_MiThermometer#custom-format-all-data-little-endian
package struct PVVXDecoder: AdvertisementDecoder {
    package init() {}
    package var format: AdvertisementFormat { .pvvx }

    package func recognizes(_ facts: AdvertisementFacts) -> Bool {
        facts.serviceDataCount(uuid16: EnvironmentSensing181A.serviceUUID16) == 15
    }

    package func decode(
        _ facts: AdvertisementFacts, context: DecodingContext
    ) throws(DecoderError) -> DecodedAdvertisement {
        var reader = ByteReader(try EnvironmentSensing181A.payload(facts, length: 15, format: "pvvx"), context: "pvvx")
        try reader.skip(6, "MAC")
        let temperature = scaled(Double(try reader.intLE(2, "temperature")), by: 0.01)
        let humidity = scaled(Double(try reader.uintLE(2, "humidity")), by: 0.01)
        let millivolts = try reader.uintLE(2, "battery voltage")
        let percent = try reader.uint8("battery")
        let counter = try reader.uint8("counter")
        return DecodedAdvertisement(
            format: .pvvx,
            measurements: EnvironmentSensing181A.measurements(
                temperature: temperature, humidity: humidity, batteryPercent: percent, batteryMillivolts: millivolts),
            packetID: UInt32(counter))
    }
}

/// ATC1441 format: MAC (most significant byte first), temperature sint16 BE in 0.1 °C, humidity %, battery %,
/// battery uint16 BE in mV, frame counter. 13 bytes.
/// - SeeAlso: https://github.com/atc1441/ATC_MiThermometer#advertising-format-of-the-custom-firmware
package struct ATC1441Decoder: AdvertisementDecoder {
    package init() {}
    package var format: AdvertisementFormat { .atc1441 }

    package func recognizes(_ facts: AdvertisementFacts) -> Bool {
        facts.serviceDataCount(uuid16: EnvironmentSensing181A.serviceUUID16) == 13
    }

    package func decode(
        _ facts: AdvertisementFacts, context: DecodingContext
    ) throws(DecoderError) -> DecodedAdvertisement {
        var reader = ByteReader(
            try EnvironmentSensing181A.payload(facts, length: 13, format: "ATC1441"),
            context: "ATC1441")
        try reader.skip(6, "MAC")
        let temperature = scaled(Double(try reader.intBE(2, "temperature")), by: 0.1)
        let humidity = Double(try reader.uint8("humidity"))
        let percent = try reader.uint8("battery")
        let millivolts = try reader.uintBE(2, "battery voltage")
        let counter = try reader.uint8("counter")
        return DecodedAdvertisement(
            format: .atc1441,
            measurements: EnvironmentSensing181A.measurements(
                temperature: temperature, humidity: humidity, batteryPercent: percent, batteryMillivolts: millivolts),
            packetID: UInt32(counter))
    }
}
