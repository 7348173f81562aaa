import BridgeCore

/// Every codec's decode (characteristic values from the air) and encode (`/set` payloads from MQTT), on one input:
/// the first byte picks the codec, the rest is the value. A first byte of 0xFF makes the rest a codec name, so the
/// configuration's codec grammar is fuzzed too. Lossless codecs must give their bytes back.
let codecNames = [
    "raw", "hex", "base64", "utf8", "battery_level", "heart_rate_measurement", "temperature", "humidity",
    "float32le", "float32be", "float64le", "float64be", "uint8", "int8", "uint8*0.5-40", "int8*0.5",
    "uint16le", "uint16be", "int16le*0.01", "int16be*0.1+100", "uint24le", "int24be*1000", "uint32le",
    "int32be*0.001", "uint64le", "int64be", "uint64be*1.5", "int64le*0.0000001-3.25",
]
let codecs = codecNames.map { try! PayloadCodec(parsing: $0) }

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzCodecs(_ data: UnsafePointer<UInt8>, _ count: Int) -> Int32 {
    let input = Array(UnsafeBufferPointer(start: data, count: count))
    guard let selector = input.first else { return 0 }
    let rest = Array(input.dropFirst())
    if selector == 0xFF {
        guard let codec = try? PayloadCodec(parsing: String(decoding: rest, as: UTF8.self)) else { return 0 }
        exercise(codec, rest)
        return 0
    }
    exercise(codecs[Int(selector) % codecs.count], rest)
    return 0
}

func exercise(_ codec: PayloadCodec, _ bytes: [UInt8]) {
    if let text = try? codec.decode(bytes), codec.canEncode {
        let encoded = try? codec.encode(payload: text)
        switch codec {
        case .raw, .hex, .base64, .utf8:
            // Lossless: what Gattway publishes is accepted back on `/set` as the same bytes.
            precondition(encoded == bytes, "\(codec) round trip changed the value")
        default:
            // Numbers may be refused on the way back (uint64 beyond 18 significant digits); they must not trap.
            break
        }
    }
    if let encoded = try? codec.encode(payload: bytes) {
        _ = try? codec.decode(encoded)
    }
}
