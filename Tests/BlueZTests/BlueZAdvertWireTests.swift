import BlueZ
import BluetoothCore
import DBus
import Testing

/// The advertisement hot path reads a report's marshalled bytes itself (`DBusPropertiesChangedBody`). Here it is held
/// to libdbus's reading of the same bytes in both byte orders, and to declining every cut, padded or bent message
/// without a trap.
@Suite("Advertisement reports read from the wire")
struct BlueZAdvertWireTests {
    private static let bthome = "0000fcd2-0000-1000-8000-00805f9b34fb"

    /// Each report, with the properties the wire reader must take from it (nil: declined).
    private static let cases: [(properties: [(String, WireValue)], expected: [BLEDeviceProperty]?)] = [
        ([("RSSI", .int16(-61))], [.rssi(-61)]),
        (
            [("ServiceData", .stringKeyed([(bthome, [0x40, 0x02, 0xCA, 0x09])])), ("RSSI", .int16(-70))],
            [.serviceData([bthome: [0x40, 0x02, 0xCA, 0x09]]), .rssi(-70)]
        ),
        (
            [("ManufacturerData", .uint16Keyed([(0x004C, [2, 21, 7]), (0x0499, [])])), ("TxPower", .int16(4))],
            [.manufacturerData([0x004C: [2, 21, 7], 0x0499: []]), .txPower(4)]
        ),
        ([("ServiceData", .stringKeyed([]))], [.serviceData([:])]),
        (
            [("ManufacturerData", .uint16Keyed([(0x0499, Array(repeating: 7, count: 1_650))]))],
            [.manufacturerData([0x0499: Array(repeating: 7, count: 1_650)])]
        ),
        ([("ManufacturerData", .uint16Keyed([(0x0499, Array(repeating: 7, count: 1_651))]))], nil),
        ([("ServiceData", .stringKeyed([(String(repeating: "a", count: 65), [1])]))], nil),
        ([("ServiceData", .stringKeyed((0..<33).map { ("uuid-\($0)", [1]) }))], nil),
        ([("Name", .string("sensor"))], nil),
        ([("RSSI", .int16(-60)), ("Alias", .string("x"))], nil),
        ([], nil),
    ]

    @Test("a report reads as libdbus reads it, in either byte order")
    func readsAsLibdbusDoes() throws {
        for (index, report) in Self.cases.enumerated() {
            for bigEndian in [false, true] {
                let bytes = WireMessage.propertiesChanged(report.properties, bigEndian: bigEndian)
                let read = bytes.withUnsafeBytes { BlueZClient.advertProperties(marshalled: $0) }
                #expect(read == report.expected, "case \(index), big-endian \(bigEndian)")
                // libdbus accepts the bytes, and its iterator-free reading of the message it made of them agrees.
                let throughLibdbus = bytes.withUnsafeBytes { bytes in
                    DBusSignalMessage.demarshalled(bytes) { BlueZClient.advertProperties(of: $0) }
                }
                #expect(throughLibdbus == .some(report.expected), "case \(index), big-endian \(bigEndian)")
                // What is taken is what the general decoding makes of the message libdbus read.
                let general = bytes.withUnsafeBytes { bytes in
                    DBusSignalMessage.demarshalled(bytes) { message -> BLEDeviceState in
                        var state = BLEDeviceState(path: "/d")
                        state.apply(changed: message.decoded.arguments[1].stringKeyedDictionary ?? [:], invalidated: [])
                        return state
                    }
                }
                if let read {
                    var state = BLEDeviceState(path: "/d")
                    _ = state.apply(read)
                    #expect(state == general, "case \(index), big-endian \(bigEndian)")
                }
            }
        }
    }

    @Test("read off the wire as the relay reads it, a report's header and properties are libdbus's reading")
    func readOffTheWireAsLibdbusReads() {
        for (index, report) in Self.cases.enumerated() {
            for bigEndian in [false, true] {
                let bytes = WireMessage.propertiesChanged(report.properties, bigEndian: bigEndian)
                let wire = bytes.withUnsafeBytes { bytes in
                    DBusSignalMessage.readOffTheWire(bytes) { ($0.summary, BlueZClient.advertProperties(of: $0)) }
                }
                let libdbus = bytes.withUnsafeBytes { bytes in
                    DBusSignalMessage.demarshalled(bytes) { ($0.summary, BlueZClient.advertProperties(of: $0)) }
                }
                #expect(wire?.0 == libdbus?.0, "case \(index), big-endian \(bigEndian)")
                #expect(wire?.0.signature == "sa{sv}as", "case \(index), big-endian \(bigEndian)")
                #expect(wire?.1 == report.expected, "case \(index), big-endian \(bigEndian)")
                #expect(bytes.withUnsafeBytes { DBusSignalMessage.wireLength(of: $0) } == bytes.count)
                // A cut message is not one message: never read, never a trap.
                for cut in stride(from: 0, to: bytes.count, by: 3) {
                    let read = bytes[..<cut].withUnsafeBytes { DBusSignalMessage.readOffTheWire($0) { _ in true } }
                    #expect(read == nil, "case \(index), cut at \(cut)")
                }
            }
        }
    }

    @Test("the body of libdbus's message is found where libdbus keeps it, in either byte order")
    func bodyFoundInPlace() throws {
        let reports = Self.cases.map { ($0.properties, [String]()) } + [([("RSSI", .int16(-60))], ["TxPower", "Name"])]
        for (properties, invalidated) in reports {
            for bigEndian in [false, true] {
                let bytes = WireMessage.propertiesChanged(properties, invalidated: invalidated, bigEndian: bigEndian)
                let found = try #require(
                    bytes.withUnsafeBytes { bytes in
                        DBusSignalMessage.demarshalled(bytes) {
                            message -> (body: [UInt8], bigEndian: Bool, marshalled: [UInt8])? in
                            var found: (body: [UInt8], bigEndian: Bool)?
                            guard message.withBodyInPlace({ found = (Array($0), $1) }), let (body, order) = found
                            else { return nil }
                            return (body, order, message.marshalled)
                        }
                    } ?? nil, "big-endian \(bigEndian): not found in place")
                // The message as libdbus now holds it: its body is its last bytes, of the length its header gives.
                let marshalled = found.marshalled
                let raw = marshalled.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: 4, as: UInt32.self) }
                let heldBigEndian = marshalled[0] == UInt8(ascii: "B")
                let bodyLength = Int(heldBigEndian ? UInt32(bigEndian: raw) : UInt32(littleEndian: raw))
                #expect(found.body == Array(marshalled.suffix(bodyLength)), "big-endian \(bigEndian)")
                #expect(found.bigEndian == heldBigEndian, "big-endian \(bigEndian)")
            }
        }
    }

    @Test("another interface, member, signature, an invalidated name, or a byte too many or too few is declined")
    func otherShapesDeclined() {
        let rssi: [(String, WireValue)] = [("RSSI", .int16(-60))]
        let declined: [[UInt8]] = [
            WireMessage.propertiesChanged(rssi, interface: "org.bluez.GattCharacteristic1"),
            WireMessage.propertiesChanged(rssi, invalidated: ["TxPower"]),
            WireMessage.propertiesChanged(rssi, signature: "sa{sv}asy", trailing: [1]),
            WireMessage.propertiesChanged(rssi, version: 2),
            WireMessage.propertiesChanged(rssi) + [0],
        ]
        for (index, bytes) in declined.enumerated() {
            #expect(bytes.withUnsafeBytes { BlueZClient.advertProperties(marshalled: $0) } == nil, "case \(index)")
        }
        // Every cut of a good report, in both byte orders, is declined without reading past its end.
        for bigEndian in [false, true] {
            let whole = WireMessage.propertiesChanged(
                [("ServiceData", .stringKeyed([(Self.bthome, [1, 2, 3])])), ("RSSI", .int16(-60))],
                bigEndian: bigEndian)
            #expect(whole.withUnsafeBytes { BlueZClient.advertProperties(marshalled: $0) } != nil)
            for length in 0..<whole.count {
                let cut = Array(whole.prefix(length))
                #expect(cut.withUnsafeBytes { BlueZClient.advertProperties(marshalled: $0) } == nil, "\(length) bytes")
            }
        }
    }

    @Test("a length that points past its container is declined, whatever byte carries it")
    func bentLengthsDeclined() {
        let whole = WireMessage.propertiesChanged([("ManufacturerData", .uint16Keyed([(0x004C, [2, 21, 7])]))])
        var accepted = 0
        for index in whole.indices {
            for value: UInt8 in [0x00, 0x7F, 0xFF] where whole[index] != value {
                var bent = whole
                bent[index] = value
                // Bent bytes are read without a trap; what is read anyway must be what libdbus makes of them.
                let read = bent.withUnsafeBytes { BlueZClient.advertProperties(marshalled: $0) }
                guard let read else { continue }
                accepted += 1
                let throughLibdbus = bent.withUnsafeBytes { bytes in
                    DBusSignalMessage.demarshalled(bytes) { BlueZClient.advertProperties(of: $0) }
                }
                if let throughLibdbus { #expect(throughLibdbus == read, "byte \(index) = \(value)") }
            }
        }
        // Bytes the reader does not look at (serial, flags, header strings) still read.
        #expect(accepted > 0)
    }
}

/// A value of a changed property, as the test writes it.
enum WireValue {
    case int16(Int16)
    case string(String)
    case uint16Keyed([(UInt16, [UInt8])])
    case stringKeyed([(String, [UInt8])])
}

/// Writes a PropertiesChanged signal in the D-Bus wire format, in either byte order: the test's own writer, so that
/// the bytes do not come from the code under test nor only from libdbus (which writes its machine's order only).
struct WireMessage {
    private(set) var bytes: [UInt8] = []
    let bigEndian: Bool

    static func propertiesChanged(
        _ properties: [(String, WireValue)], interface: String = "org.bluez.Device1", invalidated: [String] = [],
        signature: String = "sa{sv}as", trailing: [UInt8] = [], version: UInt8 = 1, bigEndian: Bool = false
    ) -> [UInt8] {
        var body = WireMessage(bigEndian: bigEndian)
        body.string(interface)
        body.array(alignment: 8) { entries in
            for (name, value) in properties {
                entries.pad(8)
                entries.string(name)
                entries.variant(value)
            }
        }
        body.array(alignment: 4) { names in for name in invalidated { names.string(name) } }
        body.bytes += trailing
        var message = WireMessage(bigEndian: bigEndian)
        message.bytes = [UInt8(ascii: bigEndian ? "B" : "l"), 4, 0, version]
        message.uint32(UInt32(body.bytes.count))
        message.uint32(7)
        message.array(alignment: 8) { fields in
            fields.field(1, "o") { $0.string("/org/bluez/hci0/dev_C4_7C_8D_6A_3E_01") }
            fields.field(2, "s") { $0.string("org.freedesktop.DBus.Properties") }
            fields.field(3, "s") { $0.string("PropertiesChanged") }
            fields.field(8, "g") { $0.signature(signature) }
        }
        message.pad(8)
        return message.bytes + body.bytes
    }

    mutating func pad(_ alignment: Int) {
        while bytes.count % alignment != 0 { bytes.append(0) }
    }

    mutating func uint16(_ value: UInt16) {
        pad(2)
        withUnsafeBytes(of: bigEndian ? value.bigEndian : value.littleEndian) { bytes += $0 }
    }

    mutating func uint32(_ value: UInt32) {
        pad(4)
        withUnsafeBytes(of: bigEndian ? value.bigEndian : value.littleEndian) { bytes += $0 }
    }

    mutating func string(_ text: String) {
        uint32(UInt32(text.utf8.count))
        bytes += text.utf8 + [0]
    }

    mutating func signature(_ text: String) {
        bytes += [UInt8(text.utf8.count)] + text.utf8 + [0]
    }

    /// An array: its length (patched once the elements are written) and the padding to its first element.
    mutating func array(alignment: Int, _ elements: (inout WireMessage) -> Void) {
        uint32(0)
        let lengthAt = bytes.count - 4
        pad(alignment)
        let start = bytes.count
        elements(&self)
        let length = UInt32(bytes.count - start)
        withUnsafeBytes(of: bigEndian ? length.bigEndian : length.littleEndian) {
            bytes.replaceSubrange(lengthAt..<lengthAt + 4, with: $0)
        }
    }

    mutating func field(_ code: UInt8, _ type: String, _ value: (inout WireMessage) -> Void) {
        pad(8)
        bytes.append(code)
        signature(type)
        value(&self)
    }

    mutating func variant(_ value: WireValue) {
        switch value {
        case .int16(let number):
            signature("n")
            uint16(UInt16(bitPattern: number))
        case .string(let text):
            signature("s")
            string(text)
        case .uint16Keyed(let entries):
            byteArrayDictionary("a{qv}", entries.map { entry in ({ $0.uint16(entry.0) }, entry.1) })
        case .stringKeyed(let entries):
            byteArrayDictionary("a{sv}", entries.map { entry in ({ $0.string(entry.0) }, entry.1) })
        }
    }

    /// A dictionary of byte arrays in variants: each entry's key as `key` writes it.
    private mutating func byteArrayDictionary(
        _ type: String, _ entries: [(key: (inout WireMessage) -> Void, data: [UInt8])]
    ) {
        signature(type)
        array(alignment: 8) { array in
            for entry in entries {
                array.pad(8)
                entry.key(&array)
                array.byteArrayVariant(entry.data)
            }
        }
    }

    private mutating func byteArrayVariant(_ data: [UInt8]) {
        signature("ay")
        array(alignment: 1) { $0.bytes += data }
    }
}
