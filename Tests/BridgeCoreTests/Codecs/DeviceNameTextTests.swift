import BridgeCore
import Testing

@Suite struct DeviceNameTextTests {
    @Test func validUTF8IsKeptWhole() {
        #expect(DeviceNameText.text(of: Array("Thermomètre salon".utf8)) == "Thermomètre salon")
    }

    @Test func invalidUTF8BecomesASCIIWithSpacesTrimmed() {
        #expect(DeviceNameText.text(of: [0xFF] + Array("Lock".utf8) + [0xC3, 0x28] + Array(" 2".utf8)) == "Lock ( 2")
    }

    @Test func aNamePaddedWithNULsEndsAtTheFirst() {
        #expect(DeviceNameText.text(of: Array("Strap".utf8) + [0, 0, 0x41]) == "Strap")
    }

    @Test func emptyOrBlankNamesAreNoName() {
        #expect(DeviceNameText.text(of: []) == nil)
        #expect(DeviceNameText.text(of: Array("   ".utf8)) == nil)
    }

    @Test func atMost248BytesAreRead() {
        let name = DeviceNameText.text(of: [UInt8](repeating: UInt8(ascii: "a"), count: 600))
        #expect(name?.utf8.count == 248)
    }
}
