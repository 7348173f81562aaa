import BlueZ
import BluetoothCore
import DBus

/// A marshalled D-Bus message, read as an advertisement report by the hot path's own wire reader
/// (`DBusPropertiesChangedBody`), which must decline what it cannot read and never read out of bounds. When libdbus
/// accepts the same bytes, the reading must be the one made through libdbus, and what it takes must be what the
/// general decoding makes of the message. A report read after the input before it (reusing its storage, as the
/// tap does, and in place skipping a body that repeats the one before but for its RSSI) must read as a report read
/// alone.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzDBusProperties(_ data: UnsafePointer<UInt8>, _ count: Int) -> Int32 {
    let bytes = UnsafeRawBufferPointer(start: data, count: count)
    let alone = BlueZClient.advertProperties(marshalled: bytes)
    let inARow = BlueZClient.advertProperties(marshalled: bytes, reusing: previous)
    precondition(alone == inARow, "a report read after another differs from the same report read alone")
    DBusSignalMessage.demarshalled(bytes) { message in
        let throughLibdbus = BlueZClient.advertProperties(of: message)
        // In place after the input before (whose body it may repeat but for the RSSI), then right after itself.
        let inPlaceInARow = BlueZClient.advertProperties(of: message, reusing: previousInPlace)
        precondition(inPlaceInARow == throughLibdbus, "a body read after another differs from the same body alone")
        let repeated = BlueZClient.advertProperties(of: message, reusing: previousInPlace)
        precondition(repeated == throughLibdbus, "a repeated body reads differently from its first reading")
        // libdbus takes the first message of the bytes and leaves what follows it.
        if message.marshalled.elementsEqual(bytes) {
            precondition(throughLibdbus == alone, "the wire reader and libdbus read the report differently")
        }
        guard let throughLibdbus, message.decoded.arguments.count == 3 else { return }
        var general = BLEDeviceState(path: "/d")
        general.apply(changed: message.decoded.arguments[1].stringKeyedDictionary ?? [:], invalidated: [])
        var taken = BLEDeviceState(path: "/d")
        _ = taken.apply(throughLibdbus)
        precondition(taken == general, "the report read differs from the general decoding")
    }
    return 0
}

/// The storage of the input before, as the tap keeps it from one report to the next (for the marshalled reading and
/// for the reading in place).
let previous = LastAdvertReport()
let previousInPlace = LastAdvertReport()
