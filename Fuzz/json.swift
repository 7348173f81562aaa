import BridgeCore

/// The JSON reader (every MQTT request, `/set` envelope and transaction goes through it): any bytes parse or fail
/// with an error, and what parses is written back as JSON that reads as the same value.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzJSON(_ data: UnsafePointer<UInt8>, _ count: Int) -> Int32 {
    let bytes = Array(UnsafeBufferPointer(start: data, count: count))
    guard let value = try? JSONValue(parsing: bytes) else { return 0 }
    let written = value.serialized
    guard let again = try? JSONValue(parsing: written, maximumDepth: 64) else {
        fatalError("JSON written from a parsed value does not parse: \(String(decoding: written, as: UTF8.self))")
    }
    precondition(again == value, "JSON round trip changed the value")
    return 0
}
