import BluetoothCore
import BridgeCore
import Testing

/// `decoder: auto` asks only the formats whose marker an advertisement carries: it must decide as asking every format
/// in order did, on any advertisement.
@Suite struct AdvertisementFormatMaskTests {
    /// Service UUIDs and companies near every format's marker, and some that are no format's.
    static let serviceUUIDs: [BluetoothUUID] =
        [0xFCD2, 0xFE95, 0x181A, 0xFD3D, 0x0D00, 0xFEAA, 0x180F, 0xFCD3].map { BluetoothUUID(uuid16: $0) }
        + [BluetoothUUID(uuid32: 0x0001_FCD2), BluetoothUUID("6E400001-B5A3-F393-E0A9-E50E24DCCA9E")!]
    static let companies: [UInt16] = [0x0499, 0xEC88, 0x004C, 0x0A66, 0x0969, 0x0000, 0xFFFF]
    static let names: [String?] = [nil, "sps", "tps", "spsx", "ATC_1234"]
    /// First bytes and lengths that formats check before they decode.
    static let prefixes: [[UInt8]] = [[], [0x05], [0x02, 0x15], [0x54], [0x69], [0xD4], [0x40], [0x50, 0x20]]
    static let lengths = [0, 1, 2, 6, 7, 13, 15, 20]

    static func randomPayload(_ generator: inout SplitMix64) -> [UInt8] {
        var payload = prefixes.randomElement(using: &generator)!
        let length = lengths.randomElement(using: &generator)!
        while payload.count < length { payload.append(UInt8.random(in: 0...255, using: &generator)) }
        return Array(payload.prefix(length))
    }

    static func randomFacts(_ generator: inout SplitMix64) -> AdvertisementFacts {
        var serviceData = AdvertisedServiceData()
        for _ in 0..<Int.random(in: 0...3, using: &generator) {
            serviceData[serviceUUIDs.randomElement(using: &generator)!] = randomPayload(&generator)
        }
        var manufacturerData = AdvertisedEntries<UInt16>()
        for _ in 0..<Int.random(in: 0...3, using: &generator) {
            manufacturerData[companies.randomElement(using: &generator)!] = randomPayload(&generator)
        }
        return AdvertisementFacts(
            address: address("A4:C1:38:00:00:01"), manufacturerData: manufacturerData, serviceData: serviceData,
            localName: names.randomElement(using: &generator)!)
    }

    /// What `auto` decided before the mask: the first format, in order, that recognises the advertisement.
    static func firstRecognizing(_ facts: AdvertisementFacts) -> AdvertisementFormat? {
        AdvertisementFormat.allCases.first { $0.recognizes(facts) }
    }

    @Test func everyFormatThatRecognizesAnAdvertisementIsMarkedInIt() {
        var generator = SplitMix64(seed: 0x4D41_534B)
        var recognized: Set<AdvertisementFormat> = []
        for _ in 0..<50_000 {
            let facts = Self.randomFacts(&generator)
            let marked = AdvertisementFormatMask.marked(in: facts)
            for format in AdvertisementFormat.allCases where format.recognizes(facts) {
                recognized.insert(format)
                #expect(marked.contains(format), "\(format) recognises \(facts) but is not marked")
            }
        }
        // The advertisements generated reach every format, or the check above would prove nothing for some.
        #expect(recognized == Set(AdvertisementFormat.allCases))
    }

    enum Outcome: Equatable {
        case decoded(DecodedAdvertisement?)
        case refused(DecoderError.Code)
    }

    static func outcome(_ decode: () throws(DecoderError) -> DecodedAdvertisement?) -> Outcome {
        do throws(DecoderError) {
            return .decoded(try decode())
        } catch {
            return .refused(error.code)
        }
    }

    @Test func autoDecodesWithTheFirstFormatThatRecognizesTheAdvertisement() {
        var generator = SplitMix64(seed: 0x4155_544F)
        let context = DecodingContext()
        var decodedCount = 0
        for _ in 0..<20_000 {
            let facts = Self.randomFacts(&generator)
            let expected = Self.outcome { () throws(DecoderError) in
                guard let format = Self.firstRecognizing(facts) else { return nil }
                return try format.decoder.decode(facts, context: context)
            }
            let actual = Self.outcome { () throws(DecoderError) in
                try DecoderSelection.auto.decode(facts, context: context)
            }
            #expect(actual == expected, "\(facts)")
            if case .decoded(.some) = actual { decodedCount += 1 }
        }
        #expect(decodedCount > 1000, "too few of the advertisements decoded to compare: \(decodedCount)")
    }

    @Test func onlyTheFormatsOfTheMarkersCarriedAreMarked() {
        func marked(_ facts: AdvertisementFacts) -> [AdvertisementFormat] {
            let mask = AdvertisementFormatMask.marked(in: facts)
            return AdvertisementFormat.allCases.filter { mask.contains($0) }
        }
        #expect(marked(serviceFacts(0xFCD2, "40")) == [.bthome])
        #expect(marked(serviceFacts(0x181A, "00")) == [.pvvx, .atc1441])
        #expect(marked(serviceFacts(0x0D00, "69")) == [.switchBotMeter])
        #expect(marked(serviceFacts(0x180F, "64")) == [])
        #expect(marked(manufacturerFacts(0x004C, "0215")) == [.iBeacon])
        #expect(marked(manufacturerFacts(0x0A66, "03", name: "sps")) == [.inkbirdIBSTH])
        #expect(marked(manufacturerFacts(0x0499, "05", name: "Ruuvi")) == [.ruuviRAWv2, .inkbirdIBSTH])
        let two = AdvertisementFacts(
            address: address("A4:C1:38:00:00:01"), manufacturerData: [0xEC88: [0], 0x0499: [5]],
            serviceData: [BluetoothUUID(uuid16: 0xFEAA): [0x20], BluetoothUUID(uuid16: 0xFE95): [0x50]],
            localName: "sps")
        #expect(marked(two) == [.mibeacon, .ruuviRAWv2, .goveeH5075, .eddystone])
    }
}
