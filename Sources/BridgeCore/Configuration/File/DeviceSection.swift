extension BridgeConfigurationFile {
    /// One entry of `devices:`.
    package struct DeviceSection: Codable, Sendable {
        package var name, address: String?
        package var match: MatchSection?
        package var connect: String?
        package var idleTimeout: Double?
        package var pair: Bool?
        package var passkey: Int?
        package var decoder, bindkeyFile, bindkeyEnv: String?
        package var characteristics: [CharacteristicSection]?
        package var homeassistant: HomeAssistantDeviceSection?

        enum CodingKeys: String, CodingKey, CaseIterable {
            case name, address, match, connect, characteristics, pair, passkey, decoder, homeassistant
            case bindkeyFile = "bindkey_file"
            case bindkeyEnv = "bindkey_env"
            case idleTimeout = "idle_timeout"
        }

        package init(from decoder: any Decoder) throws {
            let read = try FileSectionReader(decoder, keys: CodingKeys.self)
            name = read(.name)
            address = read(.address)
            match = read(.match)
            connect = read(.connect)
            idleTimeout = read(.idleTimeout)
            pair = read(.pair)
            passkey = read(.passkey)
            self.decoder = read(.decoder)
            bindkeyFile = read(.bindkeyFile)
            bindkeyEnv = read(.bindkeyEnv)
            characteristics = read(.characteristics)
            homeassistant = read(.homeassistant)
        }
    }

    /// `devices[i].match:`.
    package struct MatchSection: Codable, Sendable {
        package var namePrefix, service: String?
        package var manufacturerID: Int?

        enum CodingKeys: String, CodingKey, CaseIterable {
            case service
            case namePrefix = "name_prefix"
            case manufacturerID = "manufacturer_id"
        }

        package init(from decoder: any Decoder) throws {
            let read = try FileSectionReader(decoder, keys: CodingKeys.self)
            namePrefix = read(.namePrefix)
            service = read(.service)
            manufacturerID = read(.manufacturerID)
        }
    }

    /// One entry of `devices[i].characteristics:`.
    package struct CharacteristicSection: Codable, Sendable {
        package var name, service, uuid: String?
        package var notify, read: Bool?
        package var write, codec: String?
        package var retain: Bool?
        package var homeassistant: HomeAssistantEntitySection?

        enum CodingKeys: String, CodingKey, CaseIterable {
            case name, service, uuid, notify, read, write, codec, retain, homeassistant
        }

        package init(from decoder: any Decoder) throws {
            let field = try FileSectionReader(decoder, keys: CodingKeys.self)
            name = field(.name)
            service = field(.service)
            uuid = field(.uuid)
            notify = field(.notify)
            read = field(.read)
            write = field(.write)
            codec = field(.codec)
            retain = field(.retain)
            homeassistant = field(.homeassistant)
        }
    }
}
