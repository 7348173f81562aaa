import AESCCM
import Testing

/// The keyring keeps a libcrypto context between operations: every answer must still be the one a fresh context
/// gives, whatever came before it on the same context (other nonces, a failed tag, other lengths, other keys).
@Suite struct AESCCMKeyringTests {
    /// A deterministic source of test inputs (Knuth's MMIX linear congruential generator, its high bits), so a
    /// failure repeats.
    struct Inputs {
        var state: UInt64
        mutating func next() -> UInt64 {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return state >> 24
        }
        mutating func below(_ bound: Int) -> Int { Int(next() % UInt64(bound)) }
        mutating func bytes(_ count: Int) -> [UInt8] { (0..<count).map { _ in UInt8(truncatingIfNeeded: next()) } }
    }

    @Test func answersAsAFreshContextThroughMixedKeysLengthsAndForgeries() throws {
        let keyring = AESCCMKeyring()
        var inputs = Inputs(state: 0x6761_7474)
        let keys = (0..<3).map { _ in inputs.bytes(16) }
        var opened = 0
        var refused = 0
        for round in 0..<600 {
            let key = keys[inputs.below(keys.count)]
            let nonce = inputs.bytes(7 + inputs.below(7))
            let tagLength = 4 + 2 * inputs.below(7)
            let additionalData = inputs.bytes(inputs.below(4))
            let plaintext = inputs.bytes(inputs.below(40))
            let sealed = try AESCCM.seal(
                plaintext: plaintext, key: key, nonce: nonce, tagLength: tagLength, additionalData: additionalData)
            var tag = sealed.tag
            var ciphertext = sealed.ciphertext
            let forge = inputs.below(4)
            if forge == 1 { tag[inputs.below(tag.count)] ^= 0x01 }
            if forge == 2, !ciphertext.isEmpty { ciphertext[inputs.below(ciphertext.count)] ^= 0x80 }
            let forged = forge == 1 || (forge == 2 && !ciphertext.isEmpty)
            if forged {
                #expect(throws: AESCCMError.authenticationFailed, "round \(round)") {
                    try keyring.open(
                        ciphertext: ciphertext, key: key, nonce: nonce, tag: tag, additionalData: additionalData)
                }
                refused += 1
            } else {
                let plain = try keyring.open(
                    ciphertext: ciphertext, key: key, nonce: nonce, tag: tag, additionalData: additionalData)
                #expect(plain == plaintext, "round \(round)")
                opened += 1
            }
        }
        #expect(opened > 300 && refused > 100)
    }

    @Test func aFailedOperationLetsItsContextGoAndTheNextOneStillOpens() throws {
        let keyring = AESCCMKeyring()
        let key = hex("231d39c1d7cc1ab1aee224cd096db932")
        let nonce = hex("5448e68f80a5d2fc4100112233")
        #expect(
            try keyring.open(ciphertext: hex("a47266c95f73"), key: key, nonce: nonce, tag: hex("78237214"))
                == hex("02ca0903bf13"))
        #expect(keyring.keptContexts == 1)
        #expect(throws: AESCCMError.authenticationFailed) {
            try keyring.open(ciphertext: hex("a47266c95f73"), key: key, nonce: nonce, tag: hex("78237215"))
        }
        #expect(keyring.keptContexts == 0)
        #expect(
            try keyring.open(ciphertext: hex("a47266c95f73"), key: key, nonce: nonce, tag: hex("78237214"))
                == hex("02ca0903bf13"))
        #expect(keyring.keptContexts == 1)
    }

    @Test func keptContextsStayWithinTheCapacity() throws {
        let keyring = AESCCMKeyring()
        var inputs = Inputs(state: 7)
        let nonce = inputs.bytes(12)
        for _ in 0..<(AESCCMKeyring.capacity + 10) {
            let key = inputs.bytes(16)
            let sealed = try AESCCM.seal(plaintext: [1, 2, 3], key: key, nonce: nonce, tagLength: 4)
            #expect(
                try keyring.open(ciphertext: sealed.ciphertext, key: key, nonce: nonce, tag: sealed.tag) == [1, 2, 3])
            #expect(keyring.keptContexts <= AESCCMKeyring.capacity)
        }
        #expect(keyring.keptContexts == 10)
    }

    @Test func refusesImpossibleParametersAsAESCCMDoes() {
        let keyring = AESCCMKeyring()
        let key = hex("231d39c1d7cc1ab1aee224cd096db932")
        #expect(throws: AESCCMError.self) {
            try keyring.open(
                ciphertext: [], key: Array(key.prefix(15)), nonce: [UInt8](repeating: 0, count: 12), tag: [0, 0, 0, 0])
        }
        #expect(throws: AESCCMError.self) {
            try keyring.open(ciphertext: [], key: key, nonce: [UInt8](repeating: 0, count: 14), tag: [0, 0, 0, 0])
        }
        #expect(throws: AESCCMError.self) {
            try keyring.open(ciphertext: [], key: key, nonce: [UInt8](repeating: 0, count: 12), tag: [0, 0, 0])
        }
        #expect(keyring.keptContexts == 0)
    }

    @Test func oneKeyringServesManyTasksAtOnce() async throws {
        let keyring = AESCCMKeyring()
        let key = hex("231d39c1d7cc1ab1aee224cd096db932")
        let results = try await withThrowingTaskGroup(of: Bool.self) { group in
            for task in 0..<8 {
                group.addTask {
                    var inputs = Inputs(state: UInt64(task))
                    for _ in 0..<200 {
                        let nonce = inputs.bytes(13)
                        let plaintext = inputs.bytes(inputs.below(20))
                        let sealed = try AESCCM.seal(plaintext: plaintext, key: key, nonce: nonce, tagLength: 4)
                        let plain = try keyring.open(
                            ciphertext: sealed.ciphertext, key: key, nonce: nonce, tag: sealed.tag)
                        if plain != plaintext { return false }
                    }
                    return true
                }
            }
            return try await group.reduce(into: [Bool]()) { $0.append($1) }
        }
        #expect(results == Array(repeating: true, count: 8))
    }
}
