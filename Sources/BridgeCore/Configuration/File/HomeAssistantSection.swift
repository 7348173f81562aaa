extension BridgeConfigurationFile {
    /// `homeassistant:`: Home Assistant MQTT discovery.
    package struct HomeAssistantSection: Codable, Sendable {
        package var discoveryPrefix, statusTopic: String?

        enum CodingKeys: String, CodingKey, CaseIterable {
            case discoveryPrefix = "discovery_prefix"
            case statusTopic = "status_topic"
        }

        package init(from decoder: any Decoder) throws {
            let read = try FileSectionReader(decoder, keys: CodingKeys.self)
            discoveryPrefix = read(.discoveryPrefix)
            statusTopic = read(.statusTopic)
        }
    }

    /// `devices[i].homeassistant:`: what Home Assistant is told about the device and its decoded measurements.
    package struct HomeAssistantDeviceSection: Codable, Sendable {
        package var name, model, manufacturer: String?
        package var measurements: [String: HomeAssistantEntitySection]?

        enum CodingKeys: String, CodingKey, CaseIterable {
            case name, model, manufacturer, measurements
        }

        package init(from decoder: any Decoder) throws {
            let read = try FileSectionReader(decoder, keys: CodingKeys.self)
            name = read(.name)
            model = read(.model)
            manufacturer = read(.manufacturer)
            measurements = read(.measurements)
        }
    }

    /// `homeassistant:` of a characteristic or a decoded measurement: overrides what Gattway infers.
    package struct HomeAssistantEntitySection: Codable, Sendable {
        package var component, name, icon, deviceClass, unitOfMeasurement, stateClass, entityCategory: String?
        package var payloadOn, payloadOff, payloadPress, payloadLock, payloadUnlock: String?
        package var stateLocked, stateUnlocked: String?
        package var options: [String]?
        package var min, max, step: Double?

        enum CodingKeys: String, CodingKey, CaseIterable {
            case component, name, icon, options, min, max, step
            case deviceClass = "device_class"
            case unitOfMeasurement = "unit_of_measurement"
            case stateClass = "state_class"
            case entityCategory = "entity_category"
            case payloadOn = "payload_on"
            case payloadOff = "payload_off"
            case payloadPress = "payload_press"
            case payloadLock = "payload_lock"
            case payloadUnlock = "payload_unlock"
            case stateLocked = "state_locked"
            case stateUnlocked = "state_unlocked"
        }

        package init(from decoder: any Decoder) throws {
            let read = try FileSectionReader(decoder, keys: CodingKeys.self)
            component = read(.component)
            name = read(.name)
            icon = read(.icon)
            deviceClass = read(.deviceClass)
            unitOfMeasurement = read(.unitOfMeasurement)
            stateClass = read(.stateClass)
            entityCategory = read(.entityCategory)
            payloadOn = read(.payloadOn)
            payloadOff = read(.payloadOff)
            payloadPress = read(.payloadPress)
            payloadLock = read(.payloadLock)
            payloadUnlock = read(.payloadUnlock)
            stateLocked = read(.stateLocked)
            stateUnlocked = read(.stateUnlocked)
            options = read(.options)
            min = read(.min)
            max = read(.max)
            step = read(.step)
        }
    }
}
