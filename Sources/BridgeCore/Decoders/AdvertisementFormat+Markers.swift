import BluetoothCore

/// The formats an advertisement may be in, from the markers it carries, found in one pass over its entries.
///
/// `decoder: auto` asks each format in turn whether it recognises an advertisement, and nearly every advertisement
/// is in one format: among 1,000 sensors of ten formats `auto` asked five and a half formats a report, each looking
/// for its own service UUID or company among the entries, some 490 instructions. A format can recognise only an
/// advertisement that carries its marker (a service data UUID, a company identifier, or for Inkbird a local name beside
/// one manufacturer entry), so the entries are read once and only the formats they name are asked.
package struct AdvertisementFormatMask: Equatable {
    package private(set) var bits: UInt16 = 0

    package init() {}

    package func contains(_ format: AdvertisementFormat) -> Bool { bits & Self.bit(format) != 0 }

    package mutating func insert(_ format: AdvertisementFormat) { bits |= Self.bit(format) }

    private static func bit(_ format: AdvertisementFormat) -> UInt16 {
        switch format {
        case .bthome: 1 << 0
        case .mibeacon: 1 << 1
        case .pvvx: 1 << 2
        case .atc1441: 1 << 3
        case .ruuviRAWv2: 1 << 4
        case .goveeH5075: 1 << 5
        case .switchBotMeter: 1 << 6
        case .inkbirdIBSTH: 1 << 7
        case .iBeacon: 1 << 8
        case .eddystone: 1 << 9
        }
    }

    /// The formats whose marker `facts` carries: a superset of those that recognise it. A function, not an
    /// initializer: an initializer takes its argument owned, and the caller copied the facts (retaining each part)
    /// for it to destroy, which cost as much as the formats it spares asking.
    package static func marked(in facts: AdvertisementFacts) -> Self {
        var mask = Self()
        facts.serviceData.forEachUUID16 { mask.insert(serviceUUID16: $0) }
        facts.manufacturerData.forEachKey { mask.insert(companyID: $0) }
        if facts.localName != nil, facts.manufacturerData.count == 1 { mask.insert(.inkbirdIBSTH) }
        return mask
    }

    private mutating func insert(serviceUUID16 uuid: UInt16) {
        switch uuid {
        case BTHomeDecoder.serviceUUID16: insert(.bthome)
        case MiBeaconDecoder.serviceUUID16: insert(.mibeacon)
        case EnvironmentSensing181A.serviceUUID16:
            insert(.pvvx)
            insert(.atc1441)
        case EddystoneDecoder.serviceUUID16: insert(.eddystone)
        case _ where SwitchBotMeterDecoder.serviceUUIDs16.contains(uuid): insert(.switchBotMeter)
        default: break
        }
    }

    private mutating func insert(companyID: UInt16) {
        switch companyID {
        case RuuviRAWv2Decoder.companyID: insert(.ruuviRAWv2)
        case GoveeH5075Decoder.companyID: insert(.goveeH5075)
        case IBeaconDecoder.companyID: insert(.iBeacon)
        default: break
        }
    }
}
