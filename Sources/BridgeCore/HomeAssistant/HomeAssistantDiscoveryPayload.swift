/// The payload of a Home Assistant MQTT discovery message (`<prefix>/<component>/<node_id>/<object_id>/config`): the
/// entity's own fields, then its ids, availability, device and origin, as Home Assistant's MQTT integration reads them.
struct HomeAssistantDiscoveryPayload: Encodable {
    struct Availability: Encodable {
        let topic: String
    }

    /// The device block: a Bluetooth device (its connection and the gateway it is reached through), or the gateway.
    struct Device: Encodable {
        let identifiers: [String]
        let connections: [[String]]?
        let name: String
        let model: String?
        let manufacturer: String?
        let viaDevice: String?
        let swVersion: String?

        private enum CodingKeys: String, CodingKey {
            case identifiers, connections, name, model, manufacturer
            case viaDevice = "via_device"
            case swVersion = "sw_version"
        }
    }

    struct Origin: Encodable {
        let name: String
        let swVersion: String

        private enum CodingKeys: String, CodingKey {
            case name
            case swVersion = "sw_version"
        }
    }

    let entity: HomeAssistantEntity
    let uniqueID: String
    let objectID: String
    /// Every topic must say `online` (`availability_mode: all`); empty for an entity that reports availability itself.
    let availability: [Availability]
    let device: Device
    let origin: Origin

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: JSONKey.self)
        // The entity's fields (configured overrides included) are open-ended, so they are keyed by name.
        for (key, value) in entity.fields { try container.encode(value, forKey: JSONKey(key)) }
        try container.encode(uniqueID, forKey: JSONKey("unique_id"))
        try container.encode(objectID, forKey: JSONKey("object_id"))
        if !availability.isEmpty {
            try container.encode(availability, forKey: JSONKey("availability"))
            try container.encode("all", forKey: JSONKey("availability_mode"))
        }
        try container.encode(device, forKey: JSONKey("device"))
        try container.encode(origin, forKey: JSONKey("origin"))
    }
}
