/// Builds Home Assistant's MQTT discovery messages from the validated configuration and what is known of the
/// devices: pure, so that what Home Assistant is told can be tested without a broker.
///
/// Each configured device is one Home Assistant device (identified by its Bluetooth address, connected to the
/// gateway through `via_device`), with an entity per bridged characteristic, one per decoded measurement, and
/// RSSI and connectivity diagnostics. The gateway is a device too. Every entity is available only while its
/// device and the gateway are online (`availability_mode: all`).
///
/// - SeeAlso: https://www.home-assistant.io/integrations/mqtt/#mqtt-discovery
package struct HomeAssistantDiscovery: Sendable {
    /// One retained discovery message: `<prefix>/<component>/<node_id>/<object_id>/config` and its JSON.
    package struct Message: Sendable, Hashable {
        package var topic: String
        package var payload: [UInt8]
    }

    package let settings: HomeAssistantSettings
    package let configuration: BridgeConfiguration
    package let version: String
    let layout: TopicLayout

    /// Nil when the configuration has no `homeassistant:` section.
    package init?(configuration: BridgeConfiguration, version: String) {
        guard let settings = configuration.homeAssistant else { return nil }
        self.settings = settings
        self.configuration = configuration
        self.version = version
        layout = TopicLayout(configuration.mqtt)
    }

    /// The gateway's `node_id` and device identifier: per base topic and gateway id, so that gateways sharing a
    /// broker stay apart.
    package var gatewayNodeID: String {
        var id = "gattway_bridge_" + HomeAssistantEntity.identifier(configuration.mqtt.baseTopic)
        if let gateway = configuration.mqtt.gatewayID { id += "_" + HomeAssistantEntity.identifier(gateway) }
        return id
    }

    /// A device's `node_id` and identifier, from its address: the same across restarts, topics and names.
    package static func nodeID(address: String) -> String {
        "gattway_" + HomeAssistantEntity.identifier(address.filter { $0 != ":" })
    }

    /// Every discovery message for the gateway and the inventory's devices, sorted by topic.
    package func messages(for inventory: HomeAssistantInventory) -> [Message] {
        var out = gatewayEntities().map { message($0, nodeID: gatewayNodeID, device: nil) }
        for device in inventory.devices.values {
            guard let index = inventory.configIndex(of: device, in: configuration) else { continue }
            let nodeID = Self.nodeID(address: device.address)
            let configured = configuration.devices[index]
            for entity in entities(of: device, configured: configured) {
                out.append(message(entity, nodeID: nodeID, device: (device, configured)))
            }
        }
        return out.sorted { $0.topic < $1.topic }
    }

    /// Topics announced before and not any more: each gets an empty retained message, which removes the entity.
    package static func topicsToClear(previouslyAnnounced: Set<String>, now messages: [Message]) -> [String] {
        previouslyAnnounced.subtracting(messages.map(\.topic)).sorted()
    }

    /// The entities of one device: its characteristics, its decoded measurements, RSSI and connectivity.
    package func entities(of device: HomeAssistantInventory.Device, configured: DeviceConfiguration)
        -> [HomeAssistantEntity]
    {
        let base = layout.device(device.topic)
        var entities = configured.characteristics.compactMap { characteristic in
            characteristicEntity(characteristic, valueTopic: base + "/" + characteristic.topicName)
        }
        var taken = Set(entities.map(\.objectID))
        for measurement in device.measurements {
            var entity = measurementEntity(
                measurement, stateTopic: layout.value(device.topic, "state"),
                overrides: configured.homeAssistant.measurements[measurement.name])
            if taken.contains(entity.objectID) { entity.objectID = "state_" + entity.objectID }
            taken.insert(entity.objectID)
            entities.append(entity)
        }
        var rssi = HomeAssistantEntity(
            component: .sensor, objectID: "rssi",
            fields: [
                ("name", .text("RSSI")), ("state_topic", .text(layout.advert(device.topic))),
                ("value_template", .text(Self.template(field: "rssi"))), ("device_class", .text("signal_strength")),
                ("unit_of_measurement", .text("dBm")), ("state_class", .text("measurement")),
                ("entity_category", .text("diagnostic")),
            ])
        if taken.contains("rssi") { rssi.objectID = "link_rssi" }
        var connectivity = HomeAssistantEntity(
            component: .binarySensor, objectID: "connectivity",
            fields: [
                ("name", .text("Connectivity")), ("state_topic", .text(layout.availability(device.topic))),
                ("payload_on", .text("online")), ("payload_off", .text("offline")),
                ("device_class", .text("connectivity")), ("entity_category", .text("diagnostic")),
            ])
        // It shows the device's link itself, so it stays available (off) while the device is offline.
        connectivity.followsDeviceAvailability = false
        if taken.contains("connectivity") { connectivity.objectID = "link_connectivity" }
        return entities + [rssi, connectivity]
    }

    /// The gateway's own entities: its broker link, version, and tracked and connected device counts.
    package func gatewayEntities() -> [HomeAssistantEntity] {
        var connectivity = HomeAssistantEntity(
            component: .binarySensor, objectID: "connectivity",
            fields: [
                ("name", .text("Connectivity")), ("state_topic", .text(layout.bridgeState)),
                ("payload_on", .text("online")), ("payload_off", .text("offline")),
                ("device_class", .text("connectivity")), ("entity_category", .text("diagnostic")),
            ])
        connectivity.followsDeviceAvailability = false
        return [
            connectivity,
            HomeAssistantEntity(
                component: .sensor, objectID: "version",
                fields: [
                    ("name", .text("Version")), ("state_topic", .text(layout.bridgeInfo)),
                    ("value_template", .text(Self.template(field: "version"))), ("icon", .text("mdi:tag")),
                    ("entity_category", .text("diagnostic")),
                ]),
            HomeAssistantEntity(
                component: .sensor, objectID: "tracked_devices",
                fields: [
                    ("name", .text("Tracked devices")), ("state_topic", .text(layout.bridgeDevices)),
                    ("value_template", .text("{{ value_json | length }}")), ("state_class", .text("measurement")),
                    ("icon", .text("mdi:bluetooth")), ("entity_category", .text("diagnostic")),
                ]),
            HomeAssistantEntity(
                component: .sensor, objectID: "connected_devices",
                fields: [
                    ("name", .text("Connected devices")), ("state_topic", .text(layout.bridgeDevices)),
                    ("value_template", .text("{{ value_json | selectattr('connected') | list | length }}")),
                    ("state_class", .text("measurement")), ("icon", .text("mdi:bluetooth-connect")),
                    ("entity_category", .text("diagnostic")),
                ]),
        ]
    }

    /// `{{ value_json["x"] if value_json["x"] is defined else '' }}`: a JSON field, or nothing when the message
    /// lacks it (a packet may carry only some of a device's measurements); Home Assistant ignores an empty state
    /// and keeps the last value.
    static func template(field: String) -> String {
        let access = "value_json[\"\(field)\"]"
        return "{{ \(access) if \(access) is defined else '' }}"
    }
}
