import BluetoothCore

extension AdvertisementFormat {
    /// What an advertisement must carry for this format to recognise it. Every format declares its marker here, in
    /// one exhaustive switch, so that a format added later cannot be left out of `AdvertisementFormatMask`.
    enum Marker {
        /// Service data under one of these 16-bit UUIDs.
        case serviceData([UInt16])
        /// Manufacturer data of this company.
        case manufacturerData(companyID: UInt16)
        /// A local name beside exactly one manufacturer entry (Inkbird names its sensors, not its company).
        case localNameBesideOneManufacturerEntry
    }

    var marker: Marker {
        switch self {
        case .bthome: .serviceData([BTHomeDecoder.serviceUUID16])
        case .mibeacon: .serviceData([MiBeaconDecoder.serviceUUID16])
        case .pvvx, .atc1441: .serviceData([EnvironmentSensing181A.serviceUUID16])
        case .ruuviRAWv2: .manufacturerData(companyID: RuuviRAWv2Decoder.companyID)
        case .goveeH5075: .manufacturerData(companyID: GoveeH5075Decoder.companyID)
        case .switchBotMeter: .serviceData(SwitchBotMeterDecoder.serviceUUIDs16)
        case .inkbirdIBSTH: .localNameBesideOneManufacturerEntry
        case .iBeacon: .manufacturerData(companyID: IBeaconDecoder.companyID)
        case .eddystone: .serviceData([EddystoneDecoder.serviceUUID16])
        }
    }
}

/// The formats an advertisement may be in, from the markers it carries, found in one pass over its entries.
///
/// `decoder: auto` asks each format in turn whether it recognises an advertisement, and nearly every advertisement
/// is in one format: among 1,000 sensors of ten formats `auto` asked five and a half formats a report, each looking
/// for its own service UUID or company among the entries, some 490 instructions. A format can recognise only an
/// advertisement that carries its marker (`AdvertisementFormat.marker`), so the entries are read once and only the
/// formats they name are asked.
package struct AdvertisementFormatMask: Equatable {
    private var bits: UInt16 = 0

    package func contains(_ format: AdvertisementFormat) -> Bool { bits & Self.bit(format) != 0 }

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

    /// The markers as lists searched by value (a few entries each), made once from every format's `marker`.
    private struct Tables {
        var serviceUUID16s: [(key: UInt16, bits: UInt16)] = []
        var companyIDs: [(key: UInt16, bits: UInt16)] = []
        var localNameBits: UInt16 = 0

        init() {
            for format in AdvertisementFormat.allCases {
                let bit = AdvertisementFormatMask.bit(format)
                switch format.marker {
                case .serviceData(let uuids):
                    for uuid in uuids { Self.add(bit, for: uuid, to: &serviceUUID16s) }
                case .manufacturerData(let companyID):
                    Self.add(bit, for: companyID, to: &companyIDs)
                case .localNameBesideOneManufacturerEntry:
                    localNameBits |= bit
                }
            }
        }

        private static func add(_ bit: UInt16, for key: UInt16, to table: inout [(key: UInt16, bits: UInt16)]) {
            if let index = table.firstIndex(where: { $0.key == key }) {
                table[index].bits |= bit
            } else {
                table.append((key, bit))
            }
        }
    }

    private static let tables = Tables()

    /// The formats whose marker `facts` carries: a superset of those that recognise it. A function, not an
    /// initializer: an initializer takes its argument owned, and the caller copied the facts (retaining each part)
    /// for it to destroy, which cost as much as the formats it spares asking.
    package static func marked(in facts: AdvertisementFacts) -> Self {
        let tables = Self.tables
        var mask = Self()
        facts.serviceData.forEachUUID16 { uuid in
            for entry in tables.serviceUUID16s where entry.key == uuid { mask.bits |= entry.bits }
        }
        facts.manufacturerData.forEachKey { companyID in
            for entry in tables.companyIDs where entry.key == companyID { mask.bits |= entry.bits }
        }
        if facts.localName != nil, facts.manufacturerData.count == 1 { mask.bits |= tables.localNameBits }
        return mask
    }
}
