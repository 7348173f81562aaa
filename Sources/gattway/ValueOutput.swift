import BluetoothCore
import BridgeCore

/// How a characteristic value is shown: the codec's text for people, and in JSON both the codec's value and
/// the bytes in hex.
enum ValueOutput {
    /// The codec's text; bytes the codec cannot decode are an error, as in the daemon.
    static func text(_ bytes: [UInt8], codec: PayloadCodec) throws -> String {
        String(decoding: try codec.decode(bytes), as: UTF8.self)
    }

    /// `"value": …, "hex": "…"`: numbers and structured values as JSON, text as a string.
    static func write(_ bytes: [UInt8], codec: PayloadCodec, into writer: inout JSONWriter) throws {
        let decoded = try codec.decode(bytes)
        writer.key("value")
        switch codec {
        case .heartRateMeasurement, .integer, .batteryLevel, .temperature, .humidity:
            writer.rawValue(decoded)
        case .float32, .float64:
            let text = String(decoding: decoded, as: UTF8.self)
            if let number = Double(text), number.isFinite { writer.rawValue(decoded) } else { writer.value(text) }
        case .raw:
            // Raw bytes are not text: JSON carries them as hex only.
            writer.null()
        case .hex, .base64, .utf8:
            writer.value(String(decoding: decoded, as: UTF8.self))
        }
        writer.field("hex", Hex.string(bytes))
    }
}
