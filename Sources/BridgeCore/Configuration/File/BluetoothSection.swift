extension BridgeConfigurationFile {
    /// `bluetooth:`.
    package struct BluetoothSection: Codable, Sendable {
        package var adapter: String?
        package var scan: ScanSection?
        package var maxConcurrentConnects: Int?
        package var connectTimeout, requestTimeout, advertMinInterval, advertBatch, unheardTimeout: Double?
        package var maxTrackedDevices: Int?
        package var reconnect: ReconnectSection?

        enum CodingKeys: String, CodingKey, CaseIterable {
            case adapter, scan, reconnect
            case maxConcurrentConnects = "max_concurrent_connects"
            case connectTimeout = "connect_timeout"
            case requestTimeout = "request_timeout"
            case maxTrackedDevices = "max_tracked_devices"
            case advertMinInterval = "advert_min_interval"
            case advertBatch = "advert_batch"
            case unheardTimeout = "unheard_timeout"
        }

        package init(from decoder: any Decoder) throws {
            let read = try FileSectionReader(decoder, keys: CodingKeys.self)
            adapter = read(.adapter)
            scan = read(.scan)
            maxConcurrentConnects = read(.maxConcurrentConnects)
            connectTimeout = read(.connectTimeout)
            requestTimeout = read(.requestTimeout)
            maxTrackedDevices = read(.maxTrackedDevices)
            advertMinInterval = read(.advertMinInterval)
            advertBatch = read(.advertBatch)
            unheardTimeout = read(.unheardTimeout)
            reconnect = read(.reconnect)
        }
    }

    /// `bluetooth.scan:`.
    package struct ScanSection: Codable, Sendable {
        package var uuids: [String]?
        package var rssi, pathloss: Int?
        package var duplicates: Bool?
        package var pattern, transport: String?

        enum CodingKeys: String, CodingKey, CaseIterable {
            case uuids, rssi, pathloss, duplicates, pattern, transport
        }

        package init(from decoder: any Decoder) throws {
            let read = try FileSectionReader(decoder, keys: CodingKeys.self)
            uuids = read(.uuids)
            rssi = read(.rssi)
            pathloss = read(.pathloss)
            duplicates = read(.duplicates)
            pattern = read(.pattern)
            transport = read(.transport)
        }
    }

    /// `bluetooth.reconnect:`.
    package struct ReconnectSection: Codable, Sendable {
        package var initial, max: Double?

        enum CodingKeys: String, CodingKey, CaseIterable {
            case initial, max
        }

        package init(from decoder: any Decoder) throws {
            let read = try FileSectionReader(decoder, keys: CodingKeys.self)
            initial = read(.initial)
            max = read(.max)
        }
    }
}
