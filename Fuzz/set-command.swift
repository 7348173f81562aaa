import BridgeCore

/// `/set` payload parsing: the raw value or the `{"value": …, "transaction": …}` envelope, then the result that
/// echoes the transaction, which must be valid JSON whatever the request carried.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzSetCommand(_ data: UnsafePointer<UInt8>, _ count: Int) -> Int32 {
    let payload = Array(UnsafeBufferPointer(start: data, count: count))
    guard let command = try? SetCommand(payload: payload) else { return 0 }
    for codec in [PayloadCodec.utf8, .hex, .temperature] { _ = try? codec.encode(payload: command.value) }
    let result = SetResult.failure(error: "org.bluez.Error.Failed", message: "Operation failed with ATT error: 0x80")
    let reply = result.payload(transaction: command.transaction)
    guard (try? JSONValue(parsing: reply, maximumDepth: 64)) != nil else {
        fatalError("set/result is not JSON: \(String(decoding: reply, as: UTF8.self))")
    }
    return 0
}
