/// Decoders (and, where meaningful, encoders) for the Bluetooth SIG characteristics users meet most.
///
/// - SeeAlso: Bluetooth GATT Specification Supplement, §3.27 Battery Level, §3.113 Heart Rate Measurement,
///   §3.204 Temperature, §3.124 Humidity.
enum SIGCharacteristicCodecs {
    private static let battery = ScaledInteger(layout: IntegerLayout(bits: 8, isSigned: false, isLittleEndian: true)!)!
    private static let temperature = ScaledInteger(
        layout: IntegerLayout(bits: 16, isSigned: true, isLittleEndian: true)!,
        scale: DecimalNumber(significand: 1, exponent: -2))!
    private static let humidity = ScaledInteger(
        layout: IntegerLayout(bits: 16, isSigned: false, isLittleEndian: true)!,
        scale: DecimalNumber(significand: 1, exponent: -2))!

    private static func parameters(_ codec: PayloadCodec) -> (
        ScaledInteger, unknown: UInt64?, range: ClosedRange<Int64>?
    ) {
        switch codec {
        case .temperature: (temperature, 0x8000, nil)
        case .humidity: (humidity, 0xFFFF, 0...10_000)
        default: (battery, nil, 0...100)
        }
    }

    static func decodeScalar(_ codec: PayloadCodec, _ bytes: [UInt8]) throws(CodecError) -> String {
        let (scaled, unknown, range) = parameters(codec)
        guard bytes.count == scaled.layout.byteCount else {
            throw CodecError(
                "\(codec) needs \(scaled.layout.byteCount) byte\(scaled.layout.byteCount == 1 ? "" : "s"), "
                    + "got \(bytes.count)"
            )
        }
        let raw = PayloadCodec.unsigned(bytes, littleEndian: true)
        // The specification reserves these raw values for "value is not known"; publishing them as a
        // number (-327.68 °C) would be a lie.
        if raw == unknown { throw CodecError("\(codec) reports that the value is not known") }
        if let range, !range.contains(Int64(raw)) { throw CodecError("\(codec) value \(raw) is outside \(range)") }
        return try scaled.decode(bytes[...])
    }

    static func encodeScalar(_ codec: PayloadCodec, _ text: Substring) throws(CodecError) -> [UInt8] {
        let (scaled, unknown, range) = parameters(codec)
        let accepted = acceptedRange(codec)
        let quoted = PayloadExcerpt.quote(Array(text.utf8))
        // The field's own range (uint8 0…255) is wider than what the characteristic allows: errors name the latter.
        let bytes = try scaled.encode(text, codecName: codec.description, acceptedRange: accepted)
        let raw = PayloadCodec.unsigned(bytes, littleEndian: true)
        if raw == unknown { throw CodecError("\(quoted) is reserved for \"not known\" in \(codec) (\(accepted))") }
        if let range, !range.contains(Int64(raw)) {
            throw CodecError("\(quoted) is out of range for \(codec) (\(accepted))")
        }
        return bytes
    }

    /// What a `/set` of this characteristic may carry, in its published unit.
    private static func acceptedRange(_ codec: PayloadCodec) -> String {
        switch codec {
        // -327.68 (0x8000) means "not known".
        case .temperature: "-327.67…327.67"
        case .humidity: "0…100"
        default: "0…100"
        }
    }

    /// `{"bpm":72,"sensor_contact":true,"energy_expended":120,"rr_intervals":[0.8125]}`; `sensor_contact` only when
    /// the sensor supports contact detection, `energy_expended` (kJ) and `rr_intervals` (seconds) only when present.
    static func decodeHeartRateMeasurement(_ bytes: [UInt8]) throws(CodecError) -> [UInt8] {
        guard let flags = bytes.first else { throw CodecError("heart_rate_measurement needs at least 2 bytes, got 0") }
        var index = 1
        func take(_ count: Int, _ what: String) throws(CodecError) -> Int {
            guard bytes.count - index >= count else {
                throw CodecError(
                    "heart_rate_measurement is truncated: \(what) needs \(count) more byte\(count == 1 ? "" : "s") "
                        + "at offset \(index)"
                )
            }
            var value = 0
            for offset in 0..<count { value |= Int(bytes[index + offset]) << (8 * offset) }
            index += count
            return value
        }
        var writer = JSONWriter(reservingCapacity: 96)
        writer.beginObject()
        writer.field("bpm", try take(flags & 0x01 != 0 ? 2 : 1, "heart rate"))
        if flags & 0x04 != 0 { writer.field("sensor_contact", flags & 0x02 != 0) }
        if flags & 0x08 != 0 { writer.field("energy_expended", try take(2, "energy expended")) }
        if flags & 0x10 != 0 {
            writer.key("rr_intervals")
            writer.beginArray()
            // Each RR interval is in units of 1/1024 s; the quotient is exact in binary floating point.
            while index < bytes.count { writer.value(Double(try take(2, "RR interval")) / 1024) }
            writer.endArray()
        }
        writer.endObject()
        return writer.bytes
    }
}
