package import BluetoothCore

/// The `<device>/advert` payload: `{"address":…,"rssi":…,"name":…,"tx_power":…,
/// "manufacturer_data":{"76":"0215…"},"service_data":{"fcd2":"…"}}`.
///
/// Every field comes from the air: names are attacker-controlled text (the JSON writer escapes them), data are
/// bytes of any length (published as hex).
///
/// - SeeAlso: `schemas/mqtt/advert.schema.json`.
package struct AdvertPayload: Sendable, Hashable {
    package var address: BluetoothAddress?
    package var rssi: Int?
    package var name: String?
    package var alias: String?
    package var txPower: Int?
    package var manufacturerData: AdvertisedEntries<UInt16>
    package var serviceData: AdvertisedEntries<String>

    package init(
        address: BluetoothAddress?, rssi: Int?, name: String?, alias: String?, txPower: Int?,
        manufacturerData: AdvertisedEntries<UInt16>, serviceData: AdvertisedEntries<String>
    ) {
        self.address = address
        self.rssi = rssi
        self.name = name
        self.alias = alias
        self.txPower = txPower
        self.manufacturerData = manufacturerData
        self.serviceData = serviceData
    }

    /// The JSON text; keys of the data objects are sorted, so an unchanged advert gives the same bytes.
    package var json: [UInt8] {
        Self.json(
            address: address, rssi: rssi, name: name, alias: alias, txPower: txPower,
            manufacturerData: manufacturerData, serviceData: serviceData)
    }

    /// The JSON text of a device as BlueZ last described it, written from its state without making the payload
    /// first: copying its names and data into one, and dropping it, cost fifteen retains and releases for every
    /// advertisement.
    package static func json(of state: BLEDeviceState) -> [UInt8] {
        var payload: [UInt8] = []
        write(of: state, layout: nil, into: &payload)
        return payload
    }

    /// Writes `json(of: state)`'s bytes into `payload` in place, the address member from `layout` when it is the
    /// state's address.
    package static func write(of state: BLEDeviceState, layout: AdvertDocumentLayout?, into payload: inout [UInt8]) {
        JSONWriter.document(into: &payload) { writer in
            write(
                address: state.address, rssi: state.rssi.map(Int.init), name: state.name, alias: state.alias,
                txPower: state.txPower.map(Int.init), manufacturerData: state.manufacturerData,
                serviceData: state.serviceData, layout: layout, into: &writer)
        }
    }

    private static func json(
        address: BluetoothAddress?, rssi: Int?, name: String?, alias: String?, txPower: Int?,
        manufacturerData: AdvertisedEntries<UInt16>, serviceData: AdvertisedEntries<String>
    ) -> [UInt8] {
        JSONWriter.document { writer in
            write(
                address: address, rssi: rssi, name: name, alias: alias, txPower: txPower,
                manufacturerData: manufacturerData, serviceData: serviceData, into: &writer)
        }
    }

    private static func write(
        address: BluetoothAddress?, rssi: Int?, name: String?, alias: String?, txPower: Int?,
        manufacturerData: AdvertisedEntries<UInt16>, serviceData: AdvertisedEntries<String>,
        layout: AdvertDocumentLayout? = nil,
        into writer: inout JSONWriter
    ) {
        writer.beginObject()
        if let address {
            if let layout, layout.address == address {
                writer.member(layout.fragments, at: 0)
            } else {
                writer.field("address", address: address)
            }
        }
        if let rssi { writer.field("rssi", rssi) }
        if let name { writer.field("name", name) }
        if let alias, alias != name { writer.field("alias", alias) }
        if let txPower { writer.field("tx_power", txPower) }
        if !manufacturerData.isEmpty {
            writer.key("manufacturer_data")
            writer.beginObject()
            inKeyOrder(manufacturerData) { writer.field(JSONObjectKey(decimal: UInt64($0)), hexOf: $1) }
            writer.endObject()
        }
        if !serviceData.isEmpty {
            writer.key("service_data")
            writer.beginObject()
            inKeyOrder(serviceData) { writer.field(JSONObjectKey(text: $0), hexOf: $1) }
            writer.endObject()
        }
        writer.endObject()
    }

    /// Calls `body` for each entry in key order. Most adverts carry one entry, which needs no sorted copy.
    private static func inKeyOrder<Key: Comparable>(
        _ entries: AdvertisedEntries<Key>, _ body: (Key, [UInt8]) -> Void
    ) {
        if entries.count == 1, let (key, value) = entries.first {
            body(key, value)
        } else {
            for (key, value) in entries.sorted(by: { $0.key < $1.key }) { body(key, value) }
        }
    }
}

/// The address member of a device's advert, `"address":"C4:7C:8D:6A:3E:11"`, written once for the device: the
/// address is the one part of its advert that never changes, and writing it cost a tenth of the advert.
package struct AdvertDocumentLayout: Sendable {
    package let address: BluetoothAddress
    fileprivate let fragments: JSONFragments

    package init(address: BluetoothAddress) {
        self.address = address
        var fragments = JSONFragments()
        fragments.append(member: { $0.field("address", address: address) })
        self.fragments = fragments
    }
}
