import BluetoothCore

/// The size of a legacy advertisement, part by part, checked against the 31-byte limit.
///
/// Follows bluetoothd's arithmetic (notes §6.6): Flags AD 3 bytes (Gattway always advertises as a
/// connectable peripheral), `tx-power` 3, `appearance` 4, 2 header bytes per AD structure, service UUIDs
/// grouped into one list per size, manufacturer data 2-byte company id + data, service data UUID + data.
/// The local name goes to the scan response, budgeted on its own (``scanResponseNameLimit``).
package struct AdvertisingBudget: Sendable, Hashable {
    /// `BT_AD_MAX_DATA_LEN`.
    package static let legacyLimit = 31
    /// The longest local name sent whole: the scan response's 31 bytes less the AD structure's 2 header bytes.
    package static let scanResponseNameLimit = legacyLimit - 2

    /// One named part and its size in bytes, headers included.
    package struct Part: Sendable, Hashable {
        package var name: String
        package var bytes: Int
        /// Detail shown in parentheses, such as `1 × 128-bit`.
        package var detail: String?

        package init(name: String, bytes: Int, detail: String? = nil) {
            self.name = name
            self.bytes = bytes
            self.detail = detail
        }
    }

    package let parts: [Part]

    package var total: Int { parts.reduce(0) { $0 + $1.bytes } }
    package var overflow: Int { max(0, total - Self.legacyLimit) }

    /// Computes the budget of an advertisement.
    package init(_ advert: AdvertisementConfiguration) {
        var parts = [Part(name: "flags", bytes: 3)]
        if advert.includes.contains(.txPower) { parts.append(Part(name: "tx-power", bytes: 3)) }
        if advert.includes.contains(.appearance) || advert.appearance != nil {
            parts.append(Part(name: "appearance", bytes: 4))
        }
        let uuids = Array(Set(advert.serviceUUIDs))
        if !uuids.isEmpty {
            var bytes = 0
            var details: [String] = []
            for width in [2, 4, 16] {
                let count = uuids.filter { $0.byteWidth == width }.count
                guard count > 0 else { continue }
                bytes += 2 + count * width
                details.append("\(count) × \(width * 8)-bit")
            }
            parts.append(Part(name: "service UUIDs", bytes: bytes, detail: details.joined(separator: ", ")))
        }
        if let manufacturer = advert.manufacturerData {
            parts.append(
                Part(
                    name: "manufacturer data", bytes: 2 + 2 + manufacturer.data.count,
                    detail: "company \(Self.hex16(manufacturer.companyID)) + \(manufacturer.data.count) bytes"))
        }
        if let service = advert.serviceData {
            parts.append(
                Part(
                    name: "service data", bytes: 2 + service.uuid.byteWidth + service.data.count,
                    detail: "\(service.uuid.byteWidth * 8)-bit UUID + \(service.data.count) bytes"))
        }
        self.parts = parts
    }

    /// `advertisement needs 37 bytes, 6 over the 31-byte legacy limit (flags 3, service UUIDs 18 (1 × 128-bit), …)`,
    /// or nil when it fits.
    package var overflowMessage: String? {
        guard overflow > 0 else { return nil }
        let list = parts.map { "\($0.name) \($0.bytes)" + ($0.detail.map { " (\($0))" } ?? "") }
        return "advertisement needs \(total) bytes, \(overflow) over the \(Self.legacyLimit)-byte legacy limit ("
            + list.joined(separator: ", ") + ")"
    }

    private static func hex16(_ value: UInt16) -> String {
        "0x" + Hex.padded(UInt64(value), digits: 4, uppercase: true)
    }
}
