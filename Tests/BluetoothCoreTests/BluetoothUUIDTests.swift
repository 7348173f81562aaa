import BluetoothCore
import Testing

@Suite struct BluetoothUUIDTests {
    @Test(arguments: [
        "180D", "180d", "0x180D", "0000180D", "0000180d-0000-1000-8000-00805f9b34fb",
        "0000180D-0000-1000-8000-00805F9B34FB", "0000180d00001000800000805f9b34fb",
    ])
    func normalisesEveryFormOfTheSameUUID(text: String) throws {
        let uuid = try BluetoothUUID(parsing: text)
        #expect(uuid == BluetoothUUID(uuid16: 0x180D))
        #expect(uuid.description == "0000180d-0000-1000-8000-00805f9b34fb")
        #expect(uuid.shortForm == "180d")
        #expect(uuid.byteWidth == 2)
    }

    @Test func keepsVendorUUIDsAt128Bits() throws {
        let uuid = try BluetoothUUID(parsing: "6E400001-B5A3-F393-E0A9-E50E24DCCA9E")
        #expect(uuid.description == "6e400001-b5a3-f393-e0a9-e50e24dcca9e")
        #expect(uuid.shortForm == nil)
        #expect(uuid.shortestForm == uuid.description)
        #expect(uuid.byteWidth == 16)
        #expect(uuid.littleEndianBytes.first == 0x9E && uuid.littleEndianBytes.last == 0x6E)
    }

    @Test func reports32BitAliases() throws {
        let uuid = try BluetoothUUID(parsing: "12345678")
        #expect(uuid.uuid32 == 0x1234_5678)
        #expect(uuid.uuid16 == nil)
        #expect(uuid.shortForm == "12345678")
        #expect(uuid.byteWidth == 4)
    }

    @Test(arguments: [
        "2A1G", "", "180", "0000180d-0000-1000-8000-00805f9b34f", "0000180d_0000-1000-8000-00805f9b34fb",
        "zzzz", "0x", "0x12345",
    ])
    func rejectsMalformedUUIDsWithTheTextQuoted(text: String) {
        #expect(throws: BluetoothValueError("\"\(text)\" is not a Bluetooth UUID")) {
            try BluetoothUUID(parsing: text)
        }
    }
}
