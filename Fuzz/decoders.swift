import BluetoothCore
import BridgeCore

/// One advertisement from the air through every passive decoder (`decoder: auto` and each format by name): the
/// first byte picks where the payload goes (service data under one of the formats' UUIDs, or manufacturer data
/// under one of their company ids), the rest is the payload. Encrypted formats get a bindkey and a stand-in
/// cipher that returns bytes of the ciphertext's length, so the parsing of decrypted payloads is reached too.
/// Every decoder must return or throw its typed error; a trap or an out-of-bounds read is a finding.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzDecoders(_ data: UnsafePointer<UInt8>, _ count: Int) -> Int32 {
    let bytes = Array(UnsafeBufferPointer(start: data, count: count))
    guard let selector = bytes.first else { return 0 }
    let payload = Array(bytes.dropFirst())
    let serviceUUIDs: [UInt16] = [0xFCD2, 0xFE95, 0x181A, 0xFEAA, 0xFD3D]
    let companies: [UInt16] = [0x0499, 0xEC88, 0x004C, 0x0969, 0x0000]
    guard let address = BluetoothAddress(bytes: [0xA4, 0xC1, 0x38, 0, 0, 1]) else { return 0 }
    var facts = AdvertisementFacts(address: address)
    let slot = Int(selector) % (serviceUUIDs.count + companies.count)
    if slot < serviceUUIDs.count {
        facts.serviceData[BluetoothUUID(uuid16: serviceUUIDs[slot])] = payload
    } else {
        facts.manufacturerData[companies[slot - serviceUUIDs.count]] = payload
    }
    if selector & 0x80 != 0 { facts.localName = String(decoding: payload.prefix(29), as: UTF8.self) }
    let context = DecodingContext(
        bindkey: Bindkey(bytes: [UInt8](repeating: 0x42, count: 16)),
        openAESCCM: { ciphertext, _, _, _, _ in ciphertext.map { $0 ^ 0x5A } })
    for selection in [DecoderSelection.auto] + AdvertisementFormat.allCases.map(DecoderSelection.format) {
        _ = try? selection.decode(facts, context: context)
    }
    return 0
}
