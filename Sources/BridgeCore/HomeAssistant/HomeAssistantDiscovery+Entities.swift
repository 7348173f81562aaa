import BluetoothCore

extension HomeAssistantDiscovery {
    /// The entity of one configured characteristic: a sensor when Gattway only reports it, a `text` (or the
    /// configured command component) when it is writable, whose `command_topic` is the characteristic's `/set`.
    /// Nil for a characteristic that is neither reported nor writable.
    func characteristicEntity(_ characteristic: CharacteristicConfiguration, valueTopic: String) -> HomeAssistantEntity?
    {
        let reported = characteristic.notify || characteristic.read
        let overrides = characteristic.homeAssistant
        let component = overrides.component ?? (characteristic.write != nil ? .text : .sensor)
        guard reported || component.sendsCommands else { return nil }
        var entity = HomeAssistantEntity(
            component: component, objectID: HomeAssistantEntity.identifier(characteristic.topicName),
            fields: [
                (
                    "name",
                    .text(HomeAssistantEntity.displayName(characteristic.name ?? characteristic.uuid.shortestForm))
                )
            ])
        if reported, component != .button { entity["state_topic"] = .text(valueTopic) }
        if component.sendsCommands { entity["command_topic"] = .text(valueTopic + "/set") }
        switch component {
        case .sensor:
            for (key, value) in Self.sensorFields(of: characteristic.codec) { entity[key] = value }
        case .text:
            // Home Assistant refuses a text longer than `max` (255 by default); a characteristic takes up to 512.
            entity["max"] = .number(255)
        case .switch:
            entity["payload_on"] = .text("ON")
            entity["payload_off"] = .text("OFF")
        case .lock:
            entity["payload_lock"] = .text("LOCK")
            entity["payload_unlock"] = .text("UNLOCK")
        case .binarySensor, .button, .select, .number:
            break
        }
        if !reported, component.sendsCommands, component != .button {
            // Nothing reports the state: Home Assistant shows what it last sent.
            entity["optimistic"] = .flag(true)
        }
        entity.apply(overrides)
        return entity
    }

    /// What a codec tells about the values: the SIG characteristics' device classes and units, numbers as
    /// measurements, the heart rate's bpm out of its JSON (the rest of which becomes attributes).
    static func sensorFields(of codec: PayloadCodec) -> [(String, HomeAssistantEntity.Value)] {
        switch codec {
        case .batteryLevel:
            [
                ("device_class", .text("battery")), ("unit_of_measurement", .text("%")),
                ("state_class", .text("measurement")),
            ]
        case .temperature:
            [
                ("device_class", .text("temperature")), ("unit_of_measurement", .text("°C")),
                ("state_class", .text("measurement")),
            ]
        case .humidity:
            [
                ("device_class", .text("humidity")), ("unit_of_measurement", .text("%")),
                ("state_class", .text("measurement")),
            ]
        case .heartRateMeasurement:
            [
                ("value_template", .text(template(field: "bpm"))), ("unit_of_measurement", .text("bpm")),
                ("state_class", .text("measurement")), ("icon", .text("mdi:heart-pulse")),
            ]
        case .integer, .float32, .float64:
            [("state_class", .text("measurement"))]
        case .raw, .hex, .base64, .utf8:
            []
        }
    }

    /// The entity of a decoded measurement, read out of the `<device>/state` JSON by its key.
    func measurementEntity(
        _ measurement: HomeAssistantInventory.Measurement, stateTopic: String, overrides: HomeAssistantEntityOverrides?
    ) -> HomeAssistantEntity {
        let component = overrides?.component ?? (measurement.kind == .bool ? .binarySensor : .sensor)
        var entity = HomeAssistantEntity(
            component: component, objectID: HomeAssistantEntity.identifier(measurement.name),
            fields: [
                ("name", .text(HomeAssistantEntity.displayName(measurement.name))), ("state_topic", .text(stateTopic)),
            ])
        let access = "value_json[\"\(measurement.name)\"]"
        if component == .binarySensor {
            entity["value_template"] = .text(
                "{{ ('ON' if \(access) else 'OFF') if \(access) is defined else '' }}")
        } else {
            entity["value_template"] = .text(Self.template(field: measurement.name))
        }
        if let deviceClass = measurement.deviceClass { entity["device_class"] = .text(deviceClass) }
        if component == .sensor {
            if let unit = measurement.unit { entity["unit_of_measurement"] = .text(unit) }
            if let stateClass = measurement.stateClass, measurement.kind == .number {
                entity["state_class"] = .text(stateClass)
            }
        }
        if let overrides { entity.apply(overrides) }
        return entity
    }

    /// The discovery message of an entity: its fields, ids, availability, the device block and the origin.
    func message(
        _ entity: HomeAssistantEntity, nodeID: String,
        device: (facts: HomeAssistantInventory.Device, configured: DeviceConfiguration)?
    ) -> Message {
        let uniqueID = nodeID + "_" + entity.objectID
        // A device's entities follow the device and the gateway; the gateway's follow the gateway, except its
        // connectivity, which reports the gateway's state itself.
        var availability: [String] = []
        if let device, entity.followsDeviceAvailability { availability.append(layout.availability(device.facts.topic)) }
        // In a fleet a device's entities follow the device alone: the gateway that announced them last need not be
        // the one that owns the device, and its Last Will must not make them unavailable while another serves them.
        let followsGateway = device == nil ? entity.followsDeviceAvailability : layout.gatewayID == nil
        if followsGateway { availability.append(layout.bridgeState) }
        let payload = HomeAssistantDiscoveryPayload(
            entity: entity, uniqueID: uniqueID,
            objectID: HomeAssistantEntity.identifier((device?.facts.topic ?? "gattway") + "_" + entity.objectID),
            availability: availability.map { .init(topic: $0) },
            device: device.map { deviceBlock($0.facts, $0.configured, nodeID: nodeID) } ?? gatewayBlock,
            origin: .init(name: "Gattway", swVersion: version))
        let topic = [settings.discoveryPrefix, entity.component.rawValue, nodeID, entity.objectID, "config"]
        return Message(topic: topic.joined(separator: "/"), payload: JSONPayload.encode(payload))
    }

    private func deviceBlock(
        _ facts: HomeAssistantInventory.Device, _ configured: DeviceConfiguration, nodeID: String
    ) -> HomeAssistantDiscoveryPayload.Device {
        HomeAssistantDiscoveryPayload.Device(
            identifiers: [nodeID], connections: [["bluetooth", facts.address]],
            name: configured.homeAssistant.name ?? configured.name ?? facts.advertisedName ?? facts.topic,
            model: configured.homeAssistant.model ?? facts.format.map(Self.formatModel) ?? facts.advertisedName,
            manufacturer: configured.homeAssistant.manufacturer, viaDevice: gatewayNodeID, swVersion: nil)
    }

    private var gatewayBlock: HomeAssistantDiscoveryPayload.Device {
        HomeAssistantDiscoveryPayload.Device(
            identifiers: [gatewayNodeID], connections: nil,
            name: configuration.mqtt.gatewayID.map { "Gattway \($0)" } ?? "Gattway",
            model: "Bluetooth LE to MQTT gateway",
            manufacturer: "Gattway", viaDevice: nil, swVersion: version)
    }

    /// `bthome` → `BTHome sensor`: the model of a device known by its advertisement format.
    static func formatModel(_ format: String) -> String {
        let names = [
            "bthome": "BTHome sensor", "mibeacon": "Xiaomi MiBeacon sensor", "pvvx": "pvvx thermometer",
            "atc1441": "ATC1441 thermometer", "ruuvi_rawv2": "RuuviTag", "govee_h5075": "Govee H5075/H5072",
            "switchbot_meter": "SwitchBot Meter", "inkbird_ibs_th": "Inkbird IBS-TH", "ibeacon": "iBeacon",
            "eddystone": "Eddystone beacon",
        ]
        return names[format] ?? format
    }
}
