import BluetoothCore

/// Eddystone: service data under UUID 0xFEAA; the first byte is the frame type. Decoded: UID (0x00: calibrated
/// power, 10-byte namespace, 6-byte instance), URL (0x10: calibrated power, scheme, URL with expansion codes) and
/// unencrypted TLM (0x20 version 0: battery mV, 8.8 fixed-point temperature, advertisement count, uptime in
/// 0.1 s). Encrypted TLM and EID frames are refused as unsupported.
/// - SeeAlso: https://github.com/google/eddystone/blob/master/protocol-specification.md
package struct EddystoneDecoder: AdvertisementDecoder {
    package static let serviceUUID16: UInt16 = 0xFEAA

    package init() {}
    package var format: AdvertisementFormat { .eddystone }

    package func recognizes(_ facts: AdvertisementFacts) -> Bool {
        facts.serviceDataCount(uuid16: Self.serviceUUID16) != nil
    }

    package func decode(
        _ facts: AdvertisementFacts, context: DecodingContext
    ) throws(DecoderError) -> DecodedAdvertisement {
        let data = try facts.boundedServiceData(uuid16: Self.serviceUUID16, format: "Eddystone")
        var reader = ByteReader(data, context: "Eddystone")
        let frameType = try reader.uint8("frame type")
        let measurements: [DecodedMeasurement]
        switch frameType {
        case 0x00: measurements = try Self.uid(&reader, count: data.count)
        case 0x10: measurements = try Self.url(&reader, count: data.count)
        case 0x20: measurements = try Self.telemetry(&reader, count: data.count)
        default:
            throw DecoderError(.unsupported, "Eddystone: frame type 0x\(String(frameType, radix: 16))")
        }
        return DecodedAdvertisement(format: .eddystone, measurements: measurements)
    }

    private static func power(_ reader: inout ByteReader) throws(DecoderError) -> DecodedMeasurement {
        DecodedMeasurement(
            name: "tx_power", value: .number(Double(try reader.intBE(1, "calibrated power"))),
            unit: "dBm", deviceClass: "signal_strength")
    }

    private static func uid(_ reader: inout ByteReader, count: Int) throws(DecoderError) -> [DecodedMeasurement] {
        // 18 bytes, or 20 with the two reserved bytes
        guard count == 18 || count == 20 else {
            throw DecoderError(count < 18 ? .truncated : .tooLong, "Eddystone UID: \(count) bytes")
        }
        return [
            try power(&reader),
            DecodedMeasurement(name: "namespace", value: .text(Hex.string(try reader.bytes(10, for: "namespace")))),
            DecodedMeasurement(name: "instance", value: .text(Hex.string(try reader.bytes(6, for: "instance")))),
        ]
    }

    private static let schemes = ["http://www.", "https://www.", "http://", "https://"]
    private static let expansions = [
        ".com/", ".org/", ".edu/", ".net/", ".info/", ".biz/", ".gov/",
        ".com", ".org", ".edu", ".net", ".info", ".biz", ".gov",
    ]

    private static func url(_ reader: inout ByteReader, count: Int) throws(DecoderError) -> [DecodedMeasurement] {
        guard count >= 3 else { throw DecoderError(.truncated, "Eddystone URL: \(count) bytes") }
        // frame type, power, scheme and at most 17 encoded bytes
        guard count <= 20 else { throw DecoderError(.tooLong, "Eddystone URL: \(count) bytes, at most 20") }
        let txPower = try power(&reader)
        let scheme = Int(try reader.uint8("URL scheme"))
        guard scheme < schemes.count else {
            throw DecoderError(.malformed, "Eddystone URL: scheme prefix \(scheme) is not defined")
        }
        var url = schemes[scheme]
        for byte in try reader.bytes(reader.remaining, for: "URL") {
            if Int(byte) < expansions.count {
                url += expansions[Int(byte)]
            } else if (0x21...0x7E).contains(byte) {
                url.unicodeScalars.append(Unicode.Scalar(byte))
            } else {
                throw DecoderError(
                    .malformed, "Eddystone URL: byte 0x\(String(byte, radix: 16)) is not a URL character")
            }
        }
        return [txPower, DecodedMeasurement(name: "url", value: .text(url))]
    }

    private static func telemetry(_ reader: inout ByteReader, count: Int) throws(DecoderError) -> [DecodedMeasurement] {
        let version = try reader.uint8("TLM version")
        guard version == 0 else {
            throw DecoderError(.unsupported, "Eddystone TLM: version \(version) (encrypted TLM is not decoded)")
        }
        guard count == 14 else {
            throw DecoderError(count < 14 ? .truncated : .tooLong, "Eddystone TLM: \(count) bytes, not 14")
        }
        var measurements: [DecodedMeasurement] = []
        measurements.reserveCapacity(4)
        let millivolts = try reader.uintBE(2, "battery voltage")
        // 0 means the beacon does not measure its battery; 0x8000 that it has no temperature sensor.
        if millivolts != 0 {
            measurements.append(
                DecodedMeasurement(
                    name: "voltage", value: .number(scaled(Double(millivolts), by: 0.001)),
                    unit: "V", deviceClass: "voltage", stateClass: "measurement"))
        }
        let temperature = try reader.intBE(2, "temperature")
        if temperature != -0x8000 {
            measurements.append(
                DecodedMeasurement(
                    name: "temperature",
                    value: .number(scaled(Double(temperature), by: 1.0 / 256)),
                    unit: "°C", deviceClass: "temperature", stateClass: "measurement"))
        }
        let advertisements = try reader.uintBE(4, "advertisement count")
        let uptime = try reader.uintBE(4, "uptime")
        measurements.append(
            DecodedMeasurement(
                name: "advertisement_count", value: .number(Double(advertisements)),
                stateClass: "total_increasing"))
        measurements.append(
            DecodedMeasurement(
                name: "uptime", value: .number(scaled(Double(uptime), by: 0.1)),
                unit: "s", deviceClass: "duration", stateClass: "total_increasing"))
        return measurements
    }
}
