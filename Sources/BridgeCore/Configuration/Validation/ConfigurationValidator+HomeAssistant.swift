extension ConfigurationValidator {
    /// The longest text Gattway passes to Home Assistant in a name, icon, class, unit or payload.
    static let maximumHomeAssistantTextLength = 255

    mutating func validateHomeAssistant(_ section: BridgeConfigurationFile.HomeAssistantSection?)
        -> HomeAssistantSettings?
    {
        guard let section else { return nil }
        let prefix = section.discoveryPrefix ?? ConfigurationDefaults.homeAssistantDiscoveryPrefix
        let status = section.statusTopic ?? ConfigurationDefaults.homeAssistantStatusTopic
        let validPrefix = exactTopic(prefix, "homeassistant.discovery_prefix")
        if validPrefix != nil, prefix.hasPrefix("$") || prefix.hasSuffix("/") || prefix.hasPrefix("/") {
            fail("homeassistant.discovery_prefix", "\"\(prefix)\" must not start with $ or / nor end with /")
        }
        let validStatus = exactTopic(status, "homeassistant.status_topic")
        guard let validPrefix, let validStatus else { return nil }
        return HomeAssistantSettings(discoveryPrefix: validPrefix, statusTopic: validStatus)
    }

    /// `devices[i].homeassistant`.
    mutating func homeAssistantDevice(_ section: BridgeConfigurationFile.HomeAssistantDeviceSection?, _ path: String)
        -> HomeAssistantDeviceOverrides
    {
        var overrides = HomeAssistantDeviceOverrides()
        guard let section else { return overrides }
        overrides.name = homeAssistantText(section.name, "\(path).name")
        overrides.model = homeAssistantText(section.model, "\(path).model")
        overrides.manufacturer = homeAssistantText(section.manufacturer, "\(path).manufacturer")
        for (measurement, entity) in (section.measurements ?? [:]).sorted(by: { $0.key < $1.key }) {
            let entityPath = "\(path).measurements.\(measurement)"
            if measurement.isEmpty || measurement.count > 64 {
                fail("\(path).measurements", "\"\(measurement)\" is not a measurement name")
                continue
            }
            // Checked as readable and writable, so that a command component gets the one message below.
            let validated = homeAssistantEntity(entity, entityPath, writable: true, readable: true)
            if let component = validated.component, component.sendsCommands {
                fail("\(entityPath).component", "a decoded measurement can only be a sensor or a binary_sensor")
            }
            overrides.measurements[measurement] = validated
        }
        return overrides
    }

    /// `…characteristics[j].homeassistant`, or a measurement's mapping: every field checked against the component
    /// it applies to.
    mutating func homeAssistantEntity(
        _ section: BridgeConfigurationFile.HomeAssistantEntitySection?, _ path: String, writable: Bool, readable: Bool
    ) -> HomeAssistantEntityOverrides {
        var overrides = HomeAssistantEntityOverrides()
        guard let section else { return overrides }
        if let text = section.component {
            overrides.component = enumeration(text, "\(path).component", HomeAssistantComponent.self)
        }
        let component = overrides.component
        if let component {
            if component.sendsCommands, !writable {
                fail("\(path).component", "\(component.rawValue) sends commands, so the characteristic needs write:")
            }
            if !component.sendsCommands, !readable {
                fail(
                    "\(path).component",
                    "\(component.rawValue) shows a state, so the characteristic needs notify or read")
            }
        }
        overrides.name = homeAssistantText(section.name, "\(path).name")
        overrides.icon = homeAssistantText(section.icon, "\(path).icon")
        overrides.deviceClass = homeAssistantText(section.deviceClass, "\(path).device_class")
        overrides.unitOfMeasurement = homeAssistantText(section.unitOfMeasurement, "\(path).unit_of_measurement")
        if let stateClass = section.stateClass {
            if ["measurement", "total", "total_increasing"].contains(stateClass) {
                overrides.stateClass = stateClass
            } else {
                fail("\(path).state_class", "\"\(stateClass)\" is not one of measurement, total, total_increasing")
            }
        }
        if let category = section.entityCategory {
            if ["config", "diagnostic"].contains(category) {
                overrides.entityCategory = category
            } else {
                fail("\(path).entity_category", "\"\(category)\" is not one of config, diagnostic")
            }
        }
        func payload(_ value: String?, _ key: String, _ components: Set<HomeAssistantComponent>) -> String? {
            guard let value else { return nil }
            guard let component, components.contains(component) else {
                let names = components.map(\.rawValue).sorted().joined(separator: " or ")
                fail("\(path).\(key)", "only applies to component: \(names)")
                return nil
            }
            return homeAssistantText(value, "\(path).\(key)")
        }
        overrides.payloadOn = payload(section.payloadOn, "payload_on", [.switch, .binarySensor])
        overrides.payloadOff = payload(section.payloadOff, "payload_off", [.switch, .binarySensor])
        overrides.payloadPress = payload(section.payloadPress, "payload_press", [.button])
        overrides.payloadLock = payload(section.payloadLock, "payload_lock", [.lock])
        overrides.payloadUnlock = payload(section.payloadUnlock, "payload_unlock", [.lock])
        overrides.stateLocked = payload(section.stateLocked, "state_locked", [.lock])
        overrides.stateUnlocked = payload(section.stateUnlocked, "state_unlocked", [.lock])
        if let options = section.options {
            if component != .select {
                fail("\(path).options", "only applies to component: select")
            } else if options.isEmpty || options.count > 64 {
                fail("\(path).options", "needs 1 to 64 choices")
            } else {
                overrides.options = options.enumerated().compactMap { homeAssistantText($1, "\(path).options[\($0)]") }
            }
        } else if component == .select {
            fail("\(path).options", "is required for component: select")
        }
        for (value, key) in [(section.min, "min"), (section.max, "max"), (section.step, "step")] where value != nil {
            if component != .number { fail("\(path).\(key)", "only applies to component: number") }
            if let value, !value.isFinite { fail("\(path).\(key)", "must be a finite number") }
        }
        if component == .number {
            overrides.minimum = section.min
            overrides.maximum = section.max
            overrides.step = section.step
            if let low = section.min, let high = section.max, low >= high {
                fail("\(path).max", "\(high) must be greater than min \(low)")
            }
            if let step = section.step, step <= 0 { fail("\(path).step", "\(step) must be greater than 0") }
        }
        return overrides
    }

    /// A text handed to Home Assistant: not empty, at most 255 characters, no control characters.
    private mutating func homeAssistantText(_ text: String?, _ path: String) -> String? {
        guard let text else { return nil }
        if text.isEmpty || text.count > Self.maximumHomeAssistantTextLength
            || text.unicodeScalars.contains(where: { $0.properties.generalCategory == .control })
        {
            fail(path, "must be 1 to \(Self.maximumHomeAssistantTextLength) characters without control characters")
            return nil
        }
        return text
    }
}
