import BluetoothCore
import BridgeCore
import Testing

/// Random and mutated payloads in each format's slot: every decoder returns or throws its typed error, never
/// traps; the refusal codes are the ones a hostile payload can cause.
@Suite struct DecoderRandomInputTests {
    static let possibleCodes: Set<DecoderError.Code> = [
        .truncated, .tooLong, .malformed, .unsupported, .missingKey,
        .decryptionFailed, .notThisFormat, .notEncrypted,
    ]

    /// Where each format's payload lives, and a valid example to mutate.
    static let slots: [(AdvertisementFormat, (UUID16OrCompany), String)] = [
        (.bthome, .service(0xFCD2), "400005015d029808"),
        (.mibeacon, .service(0xFE95), "5020aa01a3bf2e3b342d580d1004b40095020a10013b"),
        (.pvvx, .service(0x181A), "dc3312342d582f09aa173d0b4b7c05"),
        (.atc1441, .service(0x181A), "582d341233dc00e03e490b2c2e"),
        (.ruuviRAWv2, .company(0x0499), "0512fc5394c37c0004fffc040cac364200cdcbb8334c884f"),
        (.goveeH5075, .company(0xEC88), "000418ee6400"),
        (.switchBotMeter, .service(0xFD3D), "6900ba18993b"),
        (.inkbirdIBSTH, .company(0x0A66), "03150010805908"),
        (.iBeacon, .company(0x004C), "0215426c7565436861726d426561636f6e730efe1355c5"),
        (.eddystone, .service(0xFEAA), "20000bb81980000003e800000e10"),
    ]

    enum UUID16OrCompany {
        case service(UInt16)
        case company(UInt16)
    }

    static func facts(_ slot: UUID16OrCompany, _ payload: [UInt8]) -> AdvertisementFacts {
        switch slot {
        case .service(let uuid):
            AdvertisementFacts(
                address: address("58:2D:34:3B:2E:BF"), serviceData: [BluetoothUUID(uuid16: uuid): payload])
        case .company(let id):
            AdvertisementFacts(address: address("58:2D:34:3B:2E:BF"), manufacturerData: [id: payload], localName: "sps")
        }
    }

    /// A cipher stand-in that returns random bytes of the ciphertext's length, so the decrypted-object parsers
    /// see hostile plaintext too.
    static func randomCipher(seed: UInt64) -> DecodingContext {
        DecodingContext(bindkey: Bindkey(bytes: [UInt8](repeating: 7, count: 16))) { ciphertext, _, _, _, _ in
            var generator = SplitMix64(seed: seed ^ UInt64(ciphertext.count))
            return ciphertext.map { _ in UInt8.random(in: 0...255, using: &generator) }
        }
    }

    @Test(arguments: 0..<slots.count)
    func randomAndMutatedPayloadsNeverTrap(slotIndex: Int) {
        let (format, slot, example) = Self.slots[slotIndex]
        let decoder = format.decoder
        var generator = SplitMix64(seed: 0x6A77_0000 + UInt64(slotIndex))
        let valid = bytes(example)
        var decodedCount = 0
        var refusedCount = 0
        for round in 0..<4000 {
            var payload: [UInt8]
            if round % 2 == 0 {
                payload = (0..<Int.random(in: 0...300, using: &generator)).map { _ in
                    UInt8.random(in: 0...255, using: &generator)
                }
            } else {
                // Mutations of a valid packet reach deeper than uniform noise: flipped bytes, cuts and growth.
                payload = valid
                for _ in 0..<Int.random(in: 1...4, using: &generator) where !payload.isEmpty {
                    payload[Int.random(in: 0..<payload.count, using: &generator)] = UInt8.random(
                        in: 0...255, using: &generator)
                }
                if Bool.random(using: &generator) {
                    payload = Array(payload.prefix(Int.random(in: 0...payload.count, using: &generator)))
                }
                if Bool.random(using: &generator) { payload += [UInt8.random(in: 0...255, using: &generator)] }
                if format == .bthome, Bool.random(using: &generator), !payload.isEmpty { payload[0] |= 0x01 }
                if format == .mibeacon, Bool.random(using: &generator), payload.count >= 2 {
                    payload[0] |= 0x08
                    payload[1] |= 0x40
                }
            }
            let context = round % 3 == 0 ? DecodingContext() : Self.randomCipher(seed: UInt64(round))
            do {
                let decoded = try decoder.decode(Self.facts(slot, payload), context: context)
                #expect(decoded.format == format)
                #expect(decoded.measurements.count <= payload.count)
                decodedCount += 1
            } catch {
                #expect(Self.possibleCodes.contains(error.code))
                refusedCount += 1
            }
        }
        #expect(decodedCount + refusedCount == 4000)
        #expect(refusedCount > 0, "random input should be refused sometimes for \(format)")
        #expect(decodedCount > 0, "mutated packets should decode sometimes for \(format)")
    }

    @Test func autoSelectionNeverTrapsOnRandomAdvertisements() {
        var generator = SplitMix64(seed: 42)
        let uuids: [UInt16] = [0xFCD2, 0xFE95, 0x181A, 0xFD3D, 0x0D00, 0xFEAA, 0x180F]
        let companies: [UInt16] = [0x0499, 0xEC88, 0x004C, 0x0A66, 0xFFFF]
        for _ in 0..<3000 {
            let payload = (0..<Int.random(in: 0...40, using: &generator)).map { _ in
                UInt8.random(in: 0...255, using: &generator)
            }
            var facts = AdvertisementFacts(
                address: address("A4:C1:38:00:00:01"),
                localName: Bool.random(using: &generator) ? "sps" : nil)
            if Bool.random(using: &generator) {
                facts.serviceData[BluetoothUUID(uuid16: uuids.randomElement(using: &generator)!)] = payload
            } else {
                facts.manufacturerData[companies.randomElement(using: &generator)!] = payload
            }
            do {
                _ = try DecoderSelection.auto.decode(facts, context: Self.randomCipher(seed: 1))
            } catch {
                #expect(Self.possibleCodes.contains(error.code))
            }
        }
    }
}
