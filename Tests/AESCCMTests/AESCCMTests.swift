import AESCCM
import Testing

func hex(_ text: String) -> [UInt8] {
    let digits = Array(text.utf8)
    var out: [UInt8] = []
    var index = 0
    while index + 1 < digits.count {
        let pair = String(decoding: digits[index...index + 1], as: UTF8.self)
        guard let byte = UInt8(pair, radix: 16) else {
            Issue.record("not hex: \(pair)")
            return []
        }
        out.append(byte)
        index += 2
    }
    return out
}

@Suite struct AESCCMTests {
    /// bthome.io's encryption example: its key, nonce and plaintext give its published ciphertext and MIC.
    let key = hex("231d39c1d7cc1ab1aee224cd096db932")
    let nonce = hex("5448e68f80a5d2fc4100112233")

    @Test func sealReproducesTheBTHomePublishedCiphertextAndMIC() throws {
        let sealed = try AESCCM.seal(plaintext: hex("02ca0903bf13"), key: key, nonce: nonce, tagLength: 4)
        #expect(sealed.ciphertext == hex("a47266c95f73"))
        #expect(sealed.tag == hex("78237214"))
    }

    @Test func openRecoversTheBTHomePublishedPlaintext() throws {
        let plaintext = try AESCCM.open(ciphertext: hex("a47266c95f73"), key: key, nonce: nonce, tag: hex("78237214"))
        #expect(plaintext == hex("02ca0903bf13"))
    }

    /// RFC 3610 packet vector #1: 8 bytes of additional data and an 8-byte tag.
    @Test func rfc3610PacketVector1() throws {
        let key = hex("c0c1c2c3c4c5c6c7c8c9cacbcccdcecf")
        let nonce = hex("00000003020100a0a1a2a3a4a5")
        let aad = hex("0001020304050607")
        let plaintext = hex("08090a0b0c0d0e0f101112131415161718191a1b1c1d1e")
        let sealed = try AESCCM.seal(plaintext: plaintext, key: key, nonce: nonce, tagLength: 8, additionalData: aad)
        #expect(sealed.ciphertext == hex("588c979a61c663d2f066d0c2c0f989806d5f6b61dac384"))
        #expect(sealed.tag == hex("17e8d12cfdf926e0"))
        #expect(
            try AESCCM.open(
                ciphertext: sealed.ciphertext, key: key, nonce: nonce, tag: sealed.tag,
                additionalData: aad) == plaintext)
    }

    @Test func aWrongKeyFailsAuthentication() {
        var wrong = key
        wrong[0] ^= 0x01
        #expect(throws: AESCCMError.authenticationFailed) {
            try AESCCM.open(ciphertext: hex("a47266c95f73"), key: wrong, nonce: nonce, tag: hex("78237214"))
        }
    }

    @Test func anAlteredCiphertextTagNonceOrAdditionalDataFailsAuthentication() {
        #expect(throws: AESCCMError.authenticationFailed) {
            try AESCCM.open(ciphertext: hex("a47266c95f74"), key: key, nonce: nonce, tag: hex("78237214"))
        }
        #expect(throws: AESCCMError.authenticationFailed) {
            try AESCCM.open(ciphertext: hex("a47266c95f73"), key: key, nonce: nonce, tag: hex("78237215"))
        }
        #expect(throws: AESCCMError.authenticationFailed) {
            try AESCCM.open(
                ciphertext: hex("a47266c95f73"), key: key, nonce: hex("5448e68f80a5d2fc4100112234"),
                tag: hex("78237214"))
        }
        #expect(throws: AESCCMError.authenticationFailed) {
            try AESCCM.open(
                ciphertext: hex("a47266c95f73"), key: key, nonce: nonce, tag: hex("78237214"),
                additionalData: [0x11])
        }
    }

    @Test func impossibleParametersAreRefusedBeforeLibcrypto() {
        #expect(throws: AESCCMError.self) {
            try AESCCM.open(ciphertext: [], key: Array(key.prefix(15)), nonce: nonce, tag: hex("78237214"))
        }
        #expect(throws: AESCCMError.self) {
            try AESCCM.open(ciphertext: [], key: key, nonce: nonce + [0], tag: hex("78237214"))
        }
        #expect(throws: AESCCMError.self) {
            try AESCCM.open(ciphertext: [], key: key, nonce: nonce, tag: hex("782372"))
        }
        #expect(throws: AESCCMError.self) {
            try AESCCM.seal(
                plaintext: [UInt8](repeating: 0, count: AESCCM.maximumLength + 1), key: key, nonce: nonce,
                tagLength: 4)
        }
    }

    @Test func anEmptyMessageStillAuthenticates() throws {
        let sealed = try AESCCM.seal(plaintext: [], key: key, nonce: nonce, tagLength: 4, additionalData: [1, 2])
        #expect(sealed.ciphertext.isEmpty && sealed.tag.count == 4)
        #expect(
            try AESCCM.open(ciphertext: [], key: key, nonce: nonce, tag: sealed.tag, additionalData: [1, 2]).isEmpty)
        #expect(throws: AESCCMError.authenticationFailed) {
            try AESCCM.open(ciphertext: [], key: key, nonce: nonce, tag: sealed.tag, additionalData: [1, 3])
        }
    }
}
