import BlueZ
import BluetoothCore
import DBus

/// A marshalled D-Bus message, read as an advertisement report by the hot path's own wire reader
/// (`DBusPropertiesChangedBody`), which must decline what it cannot read and never read out of bounds. When libdbus
/// accepts the same bytes, the reading must be the one made through libdbus, and what it takes must be what the
/// general decoding makes of the message. A report read after the input before it (reusing its storage, as the
/// tap does, and in place skipping a body that repeats the one before but for its RSSI) must read as a report read
/// alone. The same bytes are read as the relay reads what the bus sends (`DBusSignalMessage.readOffTheWire`): that
/// reading must never trap, and when libdbus takes exactly these bytes as one message, it must find that message's
/// length, and a header and readings in place equal to libdbus's, or leave the message to libdbus.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzDBusProperties(_ data: UnsafePointer<UInt8>, _ count: Int) -> Int32 {
    let bytes = UnsafeRawBufferPointer(start: data, count: count)
    let alone = BlueZClient.advertProperties(marshalled: bytes)
    let inARow = BlueZClient.advertProperties(marshalled: bytes, reusing: previous)
    precondition(alone == inARow, "a report read after another differs from the same report read alone")
    let wireLength = DBusSignalMessage.wireLength(of: bytes)
    let offTheWire = DBusSignalMessage.readOffTheWire(bytes) { reading($0) }
    DBusSignalMessage.demarshalled(bytes) { message in
        if message.marshalled.elementsEqual(bytes) {
            precondition(wireLength == bytes.count, "libdbus took the bytes as one message of another length")
            if let offTheWire {
                precondition(offTheWire == reading(message), "off the wire the message reads differently")
            }
        }
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

/// What the taps read of a message: its header, its advertisement report, and a lone byte-array change of the
/// interface it names.
struct Reading: Equatable {
    var summary: DBusMessageSummary
    var report: [BLEDeviceProperty]?
    var lone: [UInt8]?
}

func reading(_ message: DBusSignalMessage) -> Reading {
    let summary = message.summary
    return Reading(
        summary: summary, report: BlueZClient.advertProperties(of: message),
        lone: message.loneByteArrayChange(ofInterface: summary.firstString ?? "", property: "Value"))
}

/// The storage of the input before, as the tap keeps it from one report to the next (for the marshalled reading and
/// for the reading in place).
let previous = LastAdvertReport()
let previousInPlace = LastAdvertReport()
