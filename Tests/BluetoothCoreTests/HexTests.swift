import BluetoothCore
import Testing

/// Hex digits are computed, not looked up: every nibble must come out as the digit a table would give, in both
/// cases, whatever the byte's high bits hold.
@Suite("Hex digits")
struct HexTests {
    @Test("each nibble gives its digit, lower- and upper-case, and only the low four bits count")
    func digits() {
        let lower = Array("0123456789abcdef".utf8)
        let upper = Array("0123456789ABCDEF".utf8)
        for byte in UInt8.min...UInt8.max {
            #expect(Hex.digit(byte) == lower[Int(byte & 0x0F)], "byte \(byte)")
            #expect(Hex.digit(byte, uppercase: true) == upper[Int(byte & 0x0F)], "byte \(byte)")
        }
    }

    @Test("bytes encode as two digits each, and the text reads back")
    func roundTrip() {
        let bytes: [UInt8] = [0x00, 0x09, 0x0A, 0x0F, 0x10, 0x9F, 0xA0, 0xFF]
        #expect(Hex.string(bytes) == "00090a0f109fa0ff")
        #expect(Hex.string(bytes, uppercase: true) == "00090A0F109FA0FF")
        #expect(Hex.decode(Array(Hex.string(bytes).utf8)) == bytes)
        #expect(Hex.padded(0xBEEF, digits: 6) == "00beef")
        #expect(Hex.padded(0x1BEEF, digits: 4, uppercase: true) == "BEEF")
    }
}
