extension BridgeConfigurationFile {
    /// `peripheral:`.
    package struct PeripheralSection: Codable, Sendable {
        package var adapter: String?
        package var maxConnections: Int?
        package var stallLimit: Double?
        package var passkey: Int?
        package var advertise: AdvertiseSection?
        package var services: [ServiceSection]?

        enum CodingKeys: String, CodingKey, CaseIterable {
            case adapter, advertise, services, passkey
            case maxConnections = "max_connections"
            case stallLimit = "stall_limit"
        }

        package init(from decoder: any Decoder) throws {
            let read = try FileSectionReader(decoder, keys: CodingKeys.self)
            adapter = read(.adapter)
            maxConnections = read(.maxConnections)
            stallLimit = read(.stallLimit)
            passkey = read(.passkey)
            advertise = read(.advertise)
            services = read(.services)
        }
    }

    /// `peripheral.advertise:`.
    package struct AdvertiseSection: Codable, Sendable {
        package var localName: String?
        package var serviceUUIDs: [String]?
        package var manufacturerData: ManufacturerDataSection?
        package var serviceData: ServiceDataSection?
        package var discoverable: Bool?
        package var includes: [String]?
        package var appearance: Int?

        enum CodingKeys: String, CodingKey, CaseIterable {
            case discoverable, includes, appearance
            case localName = "local_name"
            case serviceUUIDs = "service_uuids"
            case manufacturerData = "manufacturer_data"
            case serviceData = "service_data"
        }

        package init(from decoder: any Decoder) throws {
            let read = try FileSectionReader(decoder, keys: CodingKeys.self)
            localName = read(.localName)
            serviceUUIDs = read(.serviceUUIDs)
            manufacturerData = read(.manufacturerData)
            serviceData = read(.serviceData)
            discoverable = read(.discoverable)
            includes = read(.includes)
            appearance = read(.appearance)
        }
    }

    /// `peripheral.advertise.manufacturer_data:`.
    package struct ManufacturerDataSection: Codable, Sendable {
        package var companyID: Int?
        package var data: String?

        enum CodingKeys: String, CodingKey, CaseIterable {
            case data
            case companyID = "company_id"
        }

        package init(from decoder: any Decoder) throws {
            let read = try FileSectionReader(decoder, keys: CodingKeys.self)
            companyID = read(.companyID)
            data = read(.data)
        }
    }

    /// `peripheral.advertise.service_data:`.
    package struct ServiceDataSection: Codable, Sendable {
        package var uuid, data: String?

        enum CodingKeys: String, CodingKey, CaseIterable {
            case uuid, data
        }

        package init(from decoder: any Decoder) throws {
            let read = try FileSectionReader(decoder, keys: CodingKeys.self)
            uuid = read(.uuid)
            data = read(.data)
        }
    }

    /// One entry of `peripheral.services:`.
    package struct ServiceSection: Codable, Sendable {
        package var uuid: String?
        package var primary: Bool?
        package var characteristics: [LocalCharacteristicSection]?

        enum CodingKeys: String, CodingKey, CaseIterable {
            case uuid, primary, characteristics
        }

        package init(from decoder: any Decoder) throws {
            let read = try FileSectionReader(decoder, keys: CodingKeys.self)
            uuid = read(.uuid)
            primary = read(.primary)
            characteristics = read(.characteristics)
        }
    }

    /// One entry of `peripheral.services[i].characteristics:`.
    package struct LocalCharacteristicSection: Codable, Sendable {
        package var uuid, name: String?
        package var flags: [String]?
        package var sourceTopic, sinkTopic, codec, initialValue: String?
        package var maxLength: Int?
        package var queue: QueueSection?
        package var descriptors: [DescriptorSection]?

        enum CodingKeys: String, CodingKey, CaseIterable {
            case uuid, name, flags, codec, queue, descriptors
            case sourceTopic = "source_topic"
            case sinkTopic = "sink_topic"
            case initialValue = "initial_value"
            case maxLength = "max_length"
        }

        package init(from decoder: any Decoder) throws {
            let read = try FileSectionReader(decoder, keys: CodingKeys.self)
            uuid = read(.uuid)
            name = read(.name)
            flags = read(.flags)
            sourceTopic = read(.sourceTopic)
            sinkTopic = read(.sinkTopic)
            codec = read(.codec)
            initialValue = read(.initialValue)
            maxLength = read(.maxLength)
            queue = read(.queue)
            descriptors = read(.descriptors)
        }
    }

    /// `…characteristics[j].queue:`.
    package struct QueueSection: Codable, Sendable {
        package var depth: Int?
        package var whenFull: String?

        enum CodingKeys: String, CodingKey, CaseIterable {
            case depth
            case whenFull = "when_full"
        }

        package init(from decoder: any Decoder) throws {
            let read = try FileSectionReader(decoder, keys: CodingKeys.self)
            depth = read(.depth)
            whenFull = read(.whenFull)
        }
    }

    /// One entry of `…characteristics[j].descriptors:`.
    package struct DescriptorSection: Codable, Sendable {
        package var uuid: String?
        package var flags: [String]?
        package var value: String?

        enum CodingKeys: String, CodingKey, CaseIterable {
            case uuid, flags, value
        }

        package init(from decoder: any Decoder) throws {
            let read = try FileSectionReader(decoder, keys: CodingKeys.self)
            uuid = read(.uuid)
            flags = read(.flags)
            value = read(.value)
        }
    }
}
