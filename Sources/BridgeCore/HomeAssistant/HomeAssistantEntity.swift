/// One Home Assistant entity as Gattway announces it: the platform, the ids, and the discovery fields that are
/// specific to it (the device block, availability and origin are added by ``HomeAssistantDiscovery``).
package struct HomeAssistantEntity: Sendable, Hashable {
    /// A discovery field's value.
    package enum Value: Sendable, Hashable, Encodable {
        case text(String)
        case number(Double)
        case flag(Bool)
        case texts([String])

        package func encode(to encoder: any Encoder) throws {
            switch self {
            case .text(let text): try text.encode(to: encoder)
            case .number(let number): try JSONNumber(number).encode(to: encoder)
            case .flag(let flag): try flag.encode(to: encoder)
            case .texts(let texts): try texts.encode(to: encoder)
            }
        }
    }

    package var component: HomeAssistantComponent
    /// The `<object_id>` level of the discovery topic, unique within the device: `heart_rate`, `rssi`.
    package var objectID: String
    /// Discovery fields in the order they are written (`name`, `state_topic`, `device_class`, …).
    package var fields: [(key: String, value: Value)]
    /// Whether the entity follows the device's availability as well as the gateway's (false for the connectivity
    /// entities, which report the device's link themselves).
    package var followsDeviceAvailability = true

    package init(component: HomeAssistantComponent, objectID: String, fields: [(key: String, value: Value)] = []) {
        self.component = component
        self.objectID = objectID
        self.fields = fields
    }

    /// The value of a field, for the builder's own decisions and for tests.
    package subscript(key: String) -> Value? {
        get { fields.first { $0.key == key }?.value }
        set {
            if let index = fields.firstIndex(where: { $0.key == key }) {
                if let newValue { fields[index].value = newValue } else { fields.remove(at: index) }
            } else if let newValue {
                fields.append((key, newValue))
            }
        }
    }

    /// Applies a configured `homeassistant:` mapping: every field it sets replaces the inferred one.
    mutating func apply(_ overrides: HomeAssistantEntityOverrides) {
        let texts: [(String, String?)] = [
            ("name", overrides.name), ("icon", overrides.icon), ("device_class", overrides.deviceClass),
            ("unit_of_measurement", overrides.unitOfMeasurement), ("state_class", overrides.stateClass),
            ("entity_category", overrides.entityCategory), ("payload_on", overrides.payloadOn),
            ("payload_off", overrides.payloadOff), ("payload_press", overrides.payloadPress),
            ("payload_lock", overrides.payloadLock), ("payload_unlock", overrides.payloadUnlock),
            ("state_locked", overrides.stateLocked), ("state_unlocked", overrides.stateUnlocked),
        ]
        for (key, value) in texts { if let value { self[key] = .text(value) } }
        if let options = overrides.options { self["options"] = .texts(options) }
        if let minimum = overrides.minimum { self["min"] = .number(minimum) }
        if let maximum = overrides.maximum { self["max"] = .number(maximum) }
        if let step = overrides.step { self["step"] = .number(step) }
    }

    package static func == (lhs: Self, rhs: Self) -> Bool {
        lhs.component == rhs.component && lhs.objectID == rhs.objectID
            && lhs.followsDeviceAvailability == rhs.followsDeviceAvailability
            && lhs.fields.map(\.key) == rhs.fields.map(\.key) && lhs.fields.map(\.value) == rhs.fields.map(\.value)
    }

    package func hash(into hasher: inout Hasher) {
        hasher.combine(component)
        hasher.combine(objectID)
        for field in fields {
            hasher.combine(field.key)
            hasher.combine(field.value)
        }
    }

    /// A name or key as a discovery topic level and id: `[a-zA-Z0-9_-]` only (Home Assistant's rule for
    /// `node_id` and `object_id`), anything else as `_`, lower-cased.
    package static func identifier(_ text: String) -> String {
        String(
            String.UnicodeScalarView(
                text.lowercased().unicodeScalars.map { scalar in
                    switch scalar {
                    case "a"..."z", "0"..."9", "_", "-": scalar
                    default: "_"
                    }
                }))
    }

    /// `heart_rate` → `Heart rate`: a configured key as a name for people.
    package static func displayName(_ key: String) -> String {
        let spaced = String(key.map { $0 == "_" || $0 == "/" ? " " : $0 })
        return spaced.prefix(1).uppercased() + spaced.dropFirst()
    }
}
