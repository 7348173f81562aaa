import BluetoothCore

/// How a characteristic value is turned into an MQTT payload and back.
///
/// Configured by name (see ``init(parsing:)``). Numbers are published as plain decimal text, structured
/// values as compact JSON. Decoding never traps: short, long or hostile bytes give a ``CodecError``.
package enum PayloadCodec: Hashable, Sendable, CustomStringConvertible {
    /// Bytes as they are.
    case raw
    /// Lower-case hex text.
    case hex
    /// Standard base64 text.
    case base64
    /// UTF-8 text; invalid UTF-8 is an error, not replaced.
    case utf8
    /// A fixed-width integer with an exact decimal scale and offset.
    case integer(ScaledInteger)
    /// IEEE 754 binary32.
    case float32(littleEndian: Bool)
    /// IEEE 754 binary64.
    case float64(littleEndian: Bool)
    /// Battery Level (0x2A19): uint8 percent, 0…100.
    case batteryLevel
    /// Heart Rate Measurement (0x2A37): flags, bpm, contact, energy, RR intervals → JSON. Decode only.
    case heartRateMeasurement
    /// Temperature (0x2A6E): sint16, 0.01 °C.
    case temperature
    /// Humidity (0x2A6F): uint16, 0.01 %.
    case humidity

    /// The configured name; parsing it gives the same codec back.
    package var description: String {
        switch self {
        case .raw: "raw"
        case .hex: "hex"
        case .base64: "base64"
        case .utf8: "utf8"
        case .integer(let scaled):
            scaled.layout.name + (scaled.scale == .one ? "" : "*\(scaled.scale)")
                + (scaled.offset == .zero ? "" : (scaled.offset.significand > 0 ? "+" : "") + "\(scaled.offset)")
        case .float32(let little): little ? "float32le" : "float32be"
        case .float64(let little): little ? "float64le" : "float64be"
        case .batteryLevel: "battery_level"
        case .heartRateMeasurement: "heart_rate_measurement"
        case .temperature: "temperature"
        case .humidity: "humidity"
        }
    }

    /// Whether ``encode(payload:)`` can produce bytes for this codec.
    package var canEncode: Bool { self != .heartRateMeasurement }

    /// Turns a characteristic value into an MQTT payload.
    package func decode(_ bytes: [UInt8]) throws(CodecError) -> [UInt8] {
        switch self {
        case .raw: return bytes
        case .hex: return Hex.encode(bytes)
        case .base64: return Base64.encode(bytes)
        case .utf8:
            guard String(validating: bytes, as: UTF8.self) != nil else {
                throw CodecError("value is not valid UTF-8 (\(bytes.count) bytes)")
            }
            return bytes
        case .integer(let scaled):
            try requireLength(bytes, scaled.layout.byteCount)
            return Array(try scaled.decode(bytes[...]).utf8)
        case .float32(let little):
            try requireLength(bytes, 4)
            let pattern = UInt32(truncatingIfNeeded: Self.unsigned(bytes, littleEndian: little))
            return Array(
                Self.text(Double(Float(bitPattern: pattern)), shortest: Float(bitPattern: pattern).description).utf8)
        case .float64(let little):
            try requireLength(bytes, 8)
            let value = Double(bitPattern: Self.unsigned(bytes, littleEndian: little))
            return Array(Self.text(value, shortest: value.description).utf8)
        case .batteryLevel, .temperature, .humidity:
            return Array(try SIGCharacteristicCodecs.decodeScalar(self, bytes).utf8)
        case .heartRateMeasurement:
            return try SIGCharacteristicCodecs.decodeHeartRateMeasurement(bytes)
        }
    }

    /// Turns an MQTT `/set` payload (in this codec's text form) into the bytes to write.
    ///
    /// - Throws: ``CodecError`` when the payload cannot be represented; no bytes are ever guessed.
    package func encode(payload: [UInt8]) throws(CodecError) -> [UInt8] {
        switch self {
        case .raw: return payload
        case .hex:
            guard let bytes = Hex.decode(payload) else {
                throw CodecError("payload is not hex (expected pairs of hex digits, like \"0a1b\")")
            }
            return bytes
        case .base64:
            guard let bytes = Base64.decode(payload) else { throw CodecError("payload is not base64") }
            return bytes
        case .utf8:
            guard String(validating: payload, as: UTF8.self) != nil else { throw CodecError("payload is not UTF-8") }
            return payload
        case .integer(let scaled):
            return try scaled.encode(try Self.trimmedText(payload), codecName: description)
        case .float32(let little):
            let value = try Self.parseDouble(payload, codecName: description)
            let single = Float(value)
            guard single.isFinite else {
                throw CodecError(
                    "\(PayloadExcerpt.quote(payload)) is out of range for \(description) "
                        + "(\(-Float.greatestFiniteMagnitude)…\(Float.greatestFiniteMagnitude))")
            }
            return Self.bytes(UInt64(single.bitPattern), count: 4, littleEndian: little)
        case .float64(let little):
            let value = try Self.parseDouble(payload, codecName: description)
            return Self.bytes(value.bitPattern, count: 8, littleEndian: little)
        case .batteryLevel, .temperature, .humidity:
            return try SIGCharacteristicCodecs.encodeScalar(self, try Self.trimmedText(payload))
        case .heartRateMeasurement:
            throw CodecError("heart_rate_measurement values can only be read, not written")
        }
    }

    private func requireLength(_ bytes: [UInt8], _ count: Int) throws(CodecError) {
        guard bytes.count == count else {
            throw CodecError("\(description) needs \(count) byte\(count == 1 ? "" : "s"), got \(bytes.count)")
        }
    }

    static func unsigned(_ bytes: [UInt8], littleEndian: Bool) -> UInt64 {
        var raw: UInt64 = 0
        for byte in (littleEndian ? Array(bytes.reversed()) : bytes) { raw = raw << 8 | UInt64(byte) }
        return raw
    }

    static func bytes(_ pattern: UInt64, count: Int, littleEndian: Bool) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: count)
        for index in 0..<count {
            out[littleEndian ? index : count - 1 - index] = UInt8(truncatingIfNeeded: pattern >> UInt64(8 * index))
        }
        return out
    }

    /// Shortest round-trip text for finite values; `NaN`/`Infinity`/`-Infinity` otherwise (what JavaScript
    /// clients print for them).
    private static func text(_ value: Double, shortest: String) -> String {
        if value.isNaN { return "NaN" }
        if value.isInfinite { return value < 0 ? "-Infinity" : "Infinity" }
        return shortest
    }

    static func trimmedText(_ payload: [UInt8]) throws(CodecError) -> Substring {
        guard let text = String(validating: payload, as: UTF8.self) else { throw CodecError("payload is not UTF-8") }
        let trimmed = text.drop(while: \.isWhitespace)
        return trimmed[
            ..<(trimmed.lastIndex(where: { !$0.isWhitespace }).map { trimmed.index(after: $0) } ?? trimmed.endIndex)]
    }

    private static func parseDouble(_ payload: [UInt8], codecName: String) throws(CodecError) -> Double {
        let text = try trimmedText(payload)
        guard let value = Double(text), value.isFinite else {
            throw CodecError(
                "\(PayloadExcerpt.quote(Array(text.utf8))) is not a finite number (codec \(codecName) accepts "
                    + "\(-Double.greatestFiniteMagnitude)…\(Double.greatestFiniteMagnitude))")
        }
        return value
    }
}
