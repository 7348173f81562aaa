import BluetoothCore
import Testing

@Suite struct BluetoothAddressTests {
    @Test(arguments: [
        "C4:7C:8D:6A:3E:11", "c4:7c:8d:6a:3e:11", "dev_C4_7C_8D_6A_3E_11",
        "/org/bluez/hci0/dev_C4_7C_8D_6A_3E_11", "C4-7C-8D-6A-3E-11",
    ])
    func parsesEveryAcceptedFormToTheCanonicalForm(text: String) throws {
        let address = try BluetoothAddress(parsing: text)
        #expect(address.description == "C4:7C:8D:6A:3E:11")
        #expect(address.topicName == "c47c8d6a3e11")
        #expect(address.bluezPathComponent == "dev_C4_7C_8D_6A_3E_11")
    }

    @Test(arguments: [
        "", "C4:7C:8D:6A:3E", "C4:7C:8D:6A:3E:1G", "C47C8D6A3E11", "C4:7C:8D:6A:3E:11:00", "C4;7C:8D:6A:3E:11",
    ])
    func rejectsMalformedAddressesWithTheTextQuoted(text: String) {
        #expect(throws: BluetoothValueError("\"\(text)\" is not a Bluetooth address")) {
            try BluetoothAddress(parsing: text)
        }
    }

    @Test("bytes in and out, most significant first; order and equality as the written form's")
    func bytesOrderAndEquality() throws {
        let address = try BluetoothAddress(parsing: "C4:7C:8D:6A:3E:11")
        #expect(address.bytes == [0xC4, 0x7C, 0x8D, 0x6A, 0x3E, 0x11])
        #expect((0..<6).map(address.byte) == address.bytes)
        #expect(BluetoothAddress(bytes: address.bytes) == address)
        #expect(BluetoothAddress(bytes: [1, 2, 3, 4, 5]) == nil)
        #expect(BluetoothAddress(bytes: [1, 2, 3, 4, 5, 6, 7]) == nil)
        let sorted = try ["FF:00:00:00:00:00", "00:00:00:00:00:01", "00:FF:00:00:00:00", "00:00:00:00:01:00"]
            .map { try BluetoothAddress(parsing: $0) }.sorted()
        #expect(
            sorted.map(\.description) == [
                "00:00:00:00:00:01", "00:00:00:00:01:00", "00:FF:00:00:00:00", "FF:00:00:00:00:00",
            ])
        #expect(Set([address, try BluetoothAddress(parsing: "c4-7c-8d-6a-3e-11")]).count == 1)
    }

    @Test func classifiesRandomAddressKinds() throws {
        #expect(try BluetoothAddress(parsing: "C4:00:00:00:00:00").isRandomStatic)
        #expect(try BluetoothAddress(parsing: "40:00:00:00:00:00").isResolvablePrivate)
        #expect(BluetoothAddressType(rawValue: "random") == .random)
    }
}
