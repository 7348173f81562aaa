/// The validated `homeassistant:` section: Home Assistant MQTT discovery is on when it is present.
package struct HomeAssistantSettings: Sendable, Hashable {
    /// The first level of every discovery topic: `<prefix>/<component>/<node_id>/<object_id>/config`.
    package var discoveryPrefix: String
    /// Where Home Assistant announces `online` (its MQTT birth message); discovery is published again then.
    package var statusTopic: String

    package init(
        discoveryPrefix: String = ConfigurationDefaults.homeAssistantDiscoveryPrefix,
        statusTopic: String = ConfigurationDefaults.homeAssistantStatusTopic
    ) {
        self.discoveryPrefix = discoveryPrefix
        self.statusTopic = statusTopic
    }
}

/// The Home Assistant MQTT platforms Gattway announces entities on.
package enum HomeAssistantComponent: String, Sendable, Hashable, CaseIterable {
    case sensor
    case binarySensor = "binary_sensor"
    case text, button, select
    case `switch`
    case number, lock

    /// Whether Home Assistant sends commands through the entity (it then needs a writable characteristic).
    package var sendsCommands: Bool {
        switch self {
        case .sensor, .binarySensor: false
        case .text, .button, .select, .switch, .number, .lock: true
        }
    }
}

/// A validated `homeassistant:` mapping of a characteristic or a decoded measurement: each field set replaces
/// what Gattway would infer; nil fields keep the inferred value.
package struct HomeAssistantEntityOverrides: Sendable, Hashable {
    package var component: HomeAssistantComponent?
    package var name, icon, deviceClass, unitOfMeasurement, stateClass, entityCategory: String?
    /// `switch` and `binary_sensor`: the payloads for on and off (commands and states alike).
    package var payloadOn, payloadOff: String?
    /// `button`: what a press writes.
    package var payloadPress: String?
    /// `lock`: the commands, and the values the state topic reports.
    package var payloadLock, payloadUnlock, stateLocked, stateUnlocked: String?
    /// `select`: the choices, written as they are.
    package var options: [String]?
    /// `number`: the range and step Home Assistant offers.
    package var minimum, maximum, step: Double?

    package init() {}
}

/// A validated `homeassistant:` mapping of a device.
package struct HomeAssistantDeviceOverrides: Sendable, Hashable {
    /// The device's name in Home Assistant (default: the configured name, else the device topic).
    package var name: String?
    package var model: String?
    package var manufacturer: String?
    /// Overrides per decoded measurement, by its key in `<device>/state` (`temperature`, `battery`).
    package var measurements: [String: HomeAssistantEntityOverrides] = [:]

    package init() {}
}
