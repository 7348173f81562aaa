import BluetoothCore

/// One passive advertisement format: recognises its marker and decodes its payload into measurements.
package protocol AdvertisementDecoder: Sendable {
    /// The format this decoder reads.
    var format: AdvertisementFormat { get }
    /// Whether the advertisement carries this format's marker (service UUID, company id, name, length); reads no
    /// field beyond what identifies the format.
    func recognizes(_ facts: AdvertisementFacts) -> Bool
    /// Decodes the advertisement.
    /// - Throws: ``DecoderError`` only; `.notThisFormat` when ``recognizes(_:)`` is false.
    func decode(_ facts: AdvertisementFacts, context: DecodingContext) throws(DecoderError) -> DecodedAdvertisement
}

/// A per-device AES-128 key for encrypted formats (BTHome, MiBeacon v4/v5). Its description never shows the key.
package struct Bindkey: Sendable, Equatable, CustomStringConvertible {
    package let bytes: [UInt8]

    /// A key from 16 bytes; nil for any other length.
    package init?(bytes: [UInt8]) {
        guard bytes.count == 16 else { return nil }
        self.bytes = bytes
    }

    /// A key from 32 hex digits; nil for anything else.
    package init?(hex: String) {
        guard let bytes = Hex.decode(Array(hex.utf8)) else { return nil }
        self.init(bytes: bytes)
    }

    package var description: String { "Bindkey(redacted)" }
}

/// AES-CCM decryption as the decoders need it; BridgeCore has no cipher of its own, the composition root passes
/// `AESCCM.open` from the AESCCM module.
/// - Parameters: ciphertext, 16-byte key, nonce, authentication tag, additional authenticated data, each but the key
///   read in place (the decoders' slices of an advertisement and a nonce on the stack, no array made of each).
/// - Returns: the plaintext; throws when the tag does not match.
package typealias AESCCMOpening =
    @Sendable (
        _ ciphertext: UnsafeRawBufferPointer, _ key: [UInt8], _ nonce: UnsafeRawBufferPointer,
        _ tag: UnsafeRawBufferPointer, _ additionalData: UnsafeRawBufferPointer
    ) throws -> [UInt8]

/// A CCM nonce (at most 16 bytes; CCM's are 7 to 13) built in place: made of an address, ids and counters for every
/// encrypted advertisement, as arrays it cost an allocation for each piece.
struct AESCCMNonce {
    private var storage: (UInt64, UInt64) = (0, 0)
    private(set) var count = 0

    mutating func append(_ byte: UInt8) {
        precondition(count < 16, "AESCCMNonce: more than 16 bytes")
        withUnsafeMutableBytes(of: &storage) { $0[count] = byte }
        count += 1
    }

    mutating func append(contentsOf bytes: some Sequence<UInt8>) {
        for byte in bytes { append(byte) }
    }

    func withUnsafeBytes<Result>(_ body: (UnsafeRawBufferPointer) throws -> Result) rethrows -> Result {
        try Swift.withUnsafeBytes(of: storage) { try body(UnsafeRawBufferPointer(rebasing: $0[..<count])) }
    }
}

/// What a decoder may need beyond the advertisement: the device's bindkey and the decryption to use it with.
package struct DecodingContext: Sendable {
    package var bindkey: Bindkey?
    package var openAESCCM: AESCCMOpening?

    /// A context; without a bindkey and decryption, encrypted packets are refused with `.missingKey`.
    package init(bindkey: Bindkey? = nil, openAESCCM: AESCCMOpening? = nil) {
        self.bindkey = bindkey
        self.openAESCCM = openAESCCM
    }

    /// Decrypts with the bindkey, mapping every failure to a ``DecoderError``.
    func open(
        ciphertext: ArraySlice<UInt8>, nonce: AESCCMNonce, tag: ArraySlice<UInt8>, additionalData: ArraySlice<UInt8>,
        format: String
    ) throws(DecoderError) -> [UInt8] {
        guard let bindkey, let openAESCCM else {
            throw DecoderError(.missingKey, "\(format) payload is encrypted and no bindkey is configured")
        }
        let plaintext: [UInt8]
        do {
            plaintext = try ciphertext.withUnsafeBytes { ciphertext in
                try nonce.withUnsafeBytes { nonce in
                    try tag.withUnsafeBytes { tag in
                        try additionalData.withUnsafeBytes { additionalData in
                            try openAESCCM(ciphertext, bindkey.bytes, nonce, tag, additionalData)
                        }
                    }
                }
            }
        } catch {
            // The cipher's own error says only that authentication failed; the code says it for counters.
            throw DecoderError(.decryptionFailed, "\(format) payload did not authenticate: wrong bindkey or altered")
        }
        guard plaintext.count == ciphertext.count else {
            throw DecoderError(.decryptionFailed, "\(format) decryption returned \(plaintext.count) bytes")
        }
        return plaintext
    }
}

/// The passive formats Gattway decodes, by the name the configuration's `decoder:` option uses.
package enum AdvertisementFormat: String, Sendable, CaseIterable {
    case bthome
    case mibeacon
    case pvvx
    case atc1441
    case ruuviRAWv2 = "ruuvi_rawv2"
    case goveeH5075 = "govee_h5075"
    case switchBotMeter = "switchbot_meter"
    case inkbirdIBSTH = "inkbird_ibs_th"
    case iBeacon = "ibeacon"
    case eddystone

    /// The decoder for this format.
    package var decoder: any AdvertisementDecoder {
        switch self {
        case .bthome: BTHomeDecoder()
        case .mibeacon: MiBeaconDecoder()
        case .pvvx: PVVXDecoder()
        case .atc1441: ATC1441Decoder()
        case .ruuviRAWv2: RuuviRAWv2Decoder()
        case .goveeH5075: GoveeH5075Decoder()
        case .switchBotMeter: SwitchBotMeterDecoder()
        case .inkbirdIBSTH: InkbirdIBSTHDecoder()
        case .iBeacon: IBeaconDecoder()
        case .eddystone: EddystoneDecoder()
        }
    }

    /// `decoder.recognizes(facts)`, called on the concrete decoder: through `any AdvertisementDecoder` each format
    /// tried was boxed, called through its witness table and destroyed, for every advertisement with a new reading.
    package func recognizes(_ facts: AdvertisementFacts) -> Bool {
        switch self {
        case .bthome: BTHomeDecoder().recognizes(facts)
        case .mibeacon: MiBeaconDecoder().recognizes(facts)
        case .pvvx: PVVXDecoder().recognizes(facts)
        case .atc1441: ATC1441Decoder().recognizes(facts)
        case .ruuviRAWv2: RuuviRAWv2Decoder().recognizes(facts)
        case .goveeH5075: GoveeH5075Decoder().recognizes(facts)
        case .switchBotMeter: SwitchBotMeterDecoder().recognizes(facts)
        case .inkbirdIBSTH: InkbirdIBSTHDecoder().recognizes(facts)
        case .iBeacon: IBeaconDecoder().recognizes(facts)
        case .eddystone: EddystoneDecoder().recognizes(facts)
        }
    }

    /// `decoder.decode(facts, context:)`, called on the concrete decoder (see `recognizes`).
    func decode(_ facts: AdvertisementFacts, context: DecodingContext) throws(DecoderError) -> DecodedAdvertisement {
        switch self {
        case .bthome: try BTHomeDecoder().decode(facts, context: context)
        case .mibeacon: try MiBeaconDecoder().decode(facts, context: context)
        case .pvvx: try PVVXDecoder().decode(facts, context: context)
        case .atc1441: try ATC1441Decoder().decode(facts, context: context)
        case .ruuviRAWv2: try RuuviRAWv2Decoder().decode(facts, context: context)
        case .goveeH5075: try GoveeH5075Decoder().decode(facts, context: context)
        case .switchBotMeter: try SwitchBotMeterDecoder().decode(facts, context: context)
        case .inkbirdIBSTH: try InkbirdIBSTHDecoder().decode(facts, context: context)
        case .iBeacon: try IBeaconDecoder().decode(facts, context: context)
        case .eddystone: try EddystoneDecoder().decode(facts, context: context)
        }
    }
}

/// The configuration's `decoder:` choice for one device.
package enum DecoderSelection: Sendable, Hashable {
    /// The first format, in ``AdvertisementFormat`` order, whose marker the advertisement carries.
    case auto
    case format(AdvertisementFormat)
    /// Advertisements stay raw.
    case none

    /// Parses `auto`, `none` or a format name; nil for anything else.
    package init?(_ text: String) {
        switch text {
        case "auto": self = .auto
        case "none": self = .none
        default:
            guard let format = AdvertisementFormat(rawValue: text) else { return nil }
            self = .format(format)
        }
    }

    /// Decodes the advertisement with the selected format.
    /// - Returns: nil for `.none`, or under `.auto` when no format recognises the advertisement.
    /// - Throws: the chosen decoder's ``DecoderError``.
    package func decode(
        _ facts: AdvertisementFacts, context: DecodingContext
    ) throws(DecoderError) -> DecodedAdvertisement? {
        switch self {
        case .none:
            return nil
        case .format(let format):
            return try format.decode(facts, context: context)
        case .auto:
            // Only the formats whose marker the advertisement carries are asked (see `AdvertisementFormatMask`).
            let marked = AdvertisementFormatMask.marked(in: facts)
            for format in AdvertisementFormat.allCases where marked.contains(format) && format.recognizes(facts) {
                return try format.decode(facts, context: context)
            }
            return nil
        }
    }
}

/// Gives repeated measurement names a numeric suffix (`temperature`, `temperature_2`), as a packet may carry
/// several values of one kind.
package struct MeasurementNamer {
    /// Names so far and how often each came, the first eight in place: an advertisement holds a few
    /// measurements, and a list that grew on the heap cost three allocations per decoded advertisement. A list, not
    /// a dictionary: comparing a few short names costs less than hashing. The rest (up to 255 bytes of objects)
    /// goes to `overflow`.
    private var names = InlineArray<8, String>(repeating: "")
    private var counts = InlineArray<8, Int>(repeating: 0)
    private var inlineCount = 0
    private var overflow: [(name: String, count: Int)] = []

    package init() {}

    package mutating func name(_ base: String) -> String {
        for index in 0..<inlineCount where names[index] == base {
            counts[index] += 1
            return "\(base)_\(counts[index])"
        }
        if inlineCount < names.count {
            names[inlineCount] = base
            counts[inlineCount] = 1
            inlineCount += 1
            return base
        }
        guard let index = overflow.firstIndex(where: { $0.name == base }) else {
            overflow.append((base, 1))
            return base
        }
        overflow[index].count += 1
        return "\(base)_\(overflow[index].count)"
    }
}

extension AdvertisementFacts {
    /// The payload under a 16-bit service UUID, refused when longer than an advertisement allows.
    func boundedServiceData(uuid16: UInt16, format: String) throws(DecoderError) -> [UInt8] {
        guard let data = serviceData(uuid16: uuid16) else {
            throw DecoderError(.notThisFormat, "no \(format) service data (UUID 0x\(String(uuid16, radix: 16)))")
        }
        guard data.count <= Self.maximumPayloadLength else {
            throw DecoderError(.tooLong, "\(format) service data is \(data.count) bytes")
        }
        return data
    }

    /// The manufacturer data of a company, refused when longer than an advertisement allows.
    func boundedManufacturerData(companyID: UInt16, format: String) throws(DecoderError) -> [UInt8] {
        guard let data = manufacturerData(companyID: companyID) else {
            throw DecoderError(
                .notThisFormat, "no \(format) manufacturer data (company 0x\(String(companyID, radix: 16)))")
        }
        guard data.count <= Self.maximumPayloadLength else {
            throw DecoderError(.tooLong, "\(format) manufacturer data is \(data.count) bytes")
        }
        return data
    }
}

/// Rounds a scaled value to the precision its factor implies, so 2506 × 0.01 reads 25.06, not 25.060000000000002.
func scaled(_ raw: Double, by factor: Double) -> Double {
    guard factor != 1 else { return raw }
    var decimals = 0.0
    var step = factor
    while step < 1, decimals < 9 {
        step *= 10
        decimals += 1
    }
    let power = pow10(Int(decimals) + 1)
    return (raw * factor * power).rounded() / power
}

private func pow10(_ exponent: Int) -> Double {
    var value = 1.0
    for _ in 0..<max(exponent, 0) { value *= 10 }
    return value
}
