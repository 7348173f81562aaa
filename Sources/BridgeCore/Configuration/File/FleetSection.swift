extension BridgeConfigurationFile {
    /// `fleet:`: tuning of the ownership protocol run by gateways that have an `mqtt.gateway_id`.
    package struct FleetSection: Codable, Sendable {
        package var margin: Int?
        package var hold: Double?
        package var connectionSlots: Int?
        package var pinned: [String: String]?

        enum CodingKeys: String, CodingKey, CaseIterable {
            case margin, hold, pinned
            case connectionSlots = "connection_slots"
        }

        package init(from decoder: any Decoder) throws {
            let read = try FileSectionReader(decoder, keys: CodingKeys.self)
            margin = read(.margin)
            hold = read(.hold)
            connectionSlots = read(.connectionSlots)
            pinned = read(.pinned)
        }
    }
}
