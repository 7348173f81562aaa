import BlueZ
import BridgeCore
import DBus

/// Advertisement data from the air, as BlueZ hands it over D-Bus (Name, Alias, RSSI, TxPower, ManufacturerData
/// a{qv}, ServiceData a{sv}), decoded into a device state and written as the `<device>/advert` JSON, which must
/// parse back. The input is cut into fields: each starts with a byte of length, the first byte picks which
/// properties are present.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzAdvert(_ data: UnsafePointer<UInt8>, _ count: Int) -> Int32 {
    var reader = FieldReader(Array(UnsafeBufferPointer(start: data, count: count)))
    let present = reader.byte()
    var properties: [String: DBusValue] = [:]
    if present & 0x01 != 0 { properties["Name"] = .variant(.string(reader.text())) }
    if present & 0x02 != 0 { properties["Alias"] = .variant(.string(reader.text())) }
    if present & 0x04 != 0 { properties["RSSI"] = .variant(.int16(Int16(bitPattern: reader.word()))) }
    if present & 0x08 != 0 { properties["TxPower"] = .variant(.int16(Int16(bitPattern: reader.word()))) }
    if present & 0x10 != 0 { properties["Address"] = .variant(.string(reader.text())) }
    if present & 0x20 != 0 {
        var entries: [DBusDictEntry] = []
        for _ in 0..<Int(reader.byte() % 8) {
            entries.append(DBusDictEntry(key: .uint16(reader.word()), value: .variant(.bytes(reader.field()))))
        }
        properties["ManufacturerData"] = .variant(.dictionary(keySignature: "q", valueSignature: "v", entries))
    }
    if present & 0x40 != 0 {
        var entries: [DBusDictEntry] = []
        for _ in 0..<Int(reader.byte() % 8) {
            entries.append(DBusDictEntry(key: .string(reader.text()), value: .variant(.bytes(reader.field()))))
        }
        properties["ServiceData"] = .variant(.dictionary(keySignature: "s", valueSignature: "v", entries))
    }
    let state = BlueZDeviceState(path: "/org/bluez/hci0/dev_00_00_00_00_00_01", properties: properties)
    let payload = AdvertPayload(
        address: state.address, rssi: state.rssi.map(Int.init), name: state.name, alias: state.alias,
        txPower: state.txPower.map(Int.init), manufacturerData: state.manufacturerData, serviceData: state.serviceData)
    let json = payload.json
    guard let parsed = try? JSONValue(parsing: json) else {
        fatalError("advert JSON does not parse: \(String(decoding: json, as: UTF8.self))")
    }
    precondition(parsed["name"]?.stringValue == state.name, "the name did not survive the JSON")
    return 0
}

/// Cuts the fuzzer's bytes into length-prefixed fields; past the end everything is empty.
struct FieldReader {
    let bytes: [UInt8]
    var index = 0

    init(_ bytes: [UInt8]) { self.bytes = bytes }

    mutating func byte() -> UInt8 {
        guard index < bytes.count else { return 0 }
        defer { index += 1 }
        return bytes[index]
    }

    mutating func word() -> UInt16 { UInt16(byte()) | UInt16(byte()) << 8 }

    mutating func field() -> [UInt8] {
        let length = min(Int(byte()), bytes.count - index)
        defer { index += length }
        return Array(bytes[index..<index + length])
    }

    /// A D-Bus string is valid UTF-8 without NUL (libdbus refuses anything else), so that is all BlueZ can send.
    mutating func text() -> String {
        String(decoding: field().filter { $0 != 0 }, as: UTF8.self)
    }
}
