import BridgeCore

/// Configuration loading: YAML text → file model → validated configuration. Any text either loads or fails with
/// configuration errors; none may trap.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzConfig(_ data: UnsafePointer<UInt8>, _ count: Int) -> Int32 {
    let text = String(decoding: UnsafeBufferPointer(start: data, count: count), as: UTF8.self)
    do {
        let configuration = try BridgeConfiguration(yaml: text)
        _ = configuration.devices.count
    } catch {
        precondition(!error.errors.isEmpty, "a refused configuration names no error")
    }
    return 0
}
