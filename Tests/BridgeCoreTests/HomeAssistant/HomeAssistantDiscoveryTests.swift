import BluetoothCore
import BridgeCore
import Foundation
import Testing

/// What Home Assistant is told: one discovery message per entity, with classes and units inferred from the codecs
/// and decoders, commands mapped to `/set`, availability tied to the device and the gateway.
@Suite struct HomeAssistantDiscoveryTests {
    static let yaml = """
        mqtt: { url: "mqtt://127.0.0.1:1883", base_topic: gattway }
        homeassistant: {}
        devices:
          - name: chest-strap
            address: "C4:7C:8D:6A:3E:11"
            characteristics:
              - { name: heart_rate, service: "180D", uuid: "2A37", notify: true, codec: heart_rate_measurement }
              - { name: battery, service: "180F", uuid: "2A19", read: true, codec: battery_level }
          - name: lock
            address: "D0:0D:10:C4:00:01"
            characteristics:
              - { name: control, service: "FFF0", uuid: "FFF1", write: with_response, codec: utf8 }
              - name: bolt
                service: "FFF0"
                uuid: "FFF2"
                notify: true
                write: with_response
                codec: utf8
                homeassistant: { component: lock, payload_lock: lock, payload_unlock: unlock, state_locked: locked, state_unlocked: unlocked }
          - name: thermometer
            match: { service: "FCD2" }
            connect: never
            homeassistant:
              measurements:
                temperature: { name: Room temperature }
        """

    static func configuration(_ text: String = yaml) throws -> BridgeConfiguration {
        try BridgeConfiguration(yaml: text)
    }

    static func payload(_ messages: [HomeAssistantDiscovery.Message], _ topic: String) throws -> JSONValue {
        let message = try #require(messages.first { $0.topic == topic }, "no discovery message on \(topic)")
        return try JSONValue(
            parsing: message.payload, limits: JSONLimits(maximumDepth: 8, maximumWidth: 64, maximumValues: 512))
    }

    static func inventory(_ configuration: BridgeConfiguration) throws -> HomeAssistantInventory {
        var inventory = HomeAssistantInventory()
        inventory.reconciled(with: configuration)
        let address = try BluetoothAddress(parsing: "A4:C1:38:00:00:01")
        inventory.deviceTracked(
            address: address, topic: "thermometer", entry: configuration.devices[2], advertisedName: "ATC_000001")
        inventory.measurementsSeen(
            DecodedAdvertisement(
                format: .bthome,
                measurements: [
                    DecodedMeasurement(name: "packet_id", value: .number(5)),
                    DecodedMeasurement(
                        name: "battery", value: .number(93), unit: "%", deviceClass: "battery",
                        stateClass: "measurement"),
                    DecodedMeasurement(
                        name: "temperature", value: .number(21.5), unit: "°C", deviceClass: "temperature",
                        stateClass: "measurement"),
                    DecodedMeasurement(name: "opening", value: .bool(true), deviceClass: "opening"),
                ]), address: address)
        return inventory
    }

    static func messages() throws -> [HomeAssistantDiscovery.Message] {
        let configuration = try configuration()
        let discovery = try #require(HomeAssistantDiscovery(configuration: configuration, version: "1.2.3"))
        return discovery.messages(for: try inventory(configuration))
    }

    @Test func noSectionMeansNoDiscovery() throws {
        let configuration = try Self.configuration("mqtt: { url: \"mqtt://127.0.0.1\" }")
        #expect(HomeAssistantDiscovery(configuration: configuration, version: "1") == nil)
        #expect(configuration.homeAssistant == nil)
    }

    @Test func heartRateIsAMeasurementInBPMReadOutOfItsJSON() throws {
        let heart = try Self.payload(
            try Self.messages(), "homeassistant/sensor/gattway_c47c8d6a3e11/heart_rate/config")
        #expect(heart["state_topic"]?.stringValue == "gattway/chest-strap/heart_rate")
        #expect(heart["unit_of_measurement"]?.stringValue == "bpm")
        #expect(heart["state_class"]?.stringValue == "measurement")
        #expect(
            heart["value_template"]?.stringValue
                == "{{ value_json[\"bpm\"] if value_json[\"bpm\"] is defined else '' }}")
        #expect(heart["unique_id"]?.stringValue == "gattway_c47c8d6a3e11_heart_rate")
        #expect(heart["object_id"]?.stringValue == "chest-strap_heart_rate")
    }

    /// In a fleet the gateway that announced a device need not own it: its entities follow the device alone, while
    /// the gateway's own entities still follow the gateway's state.
    @Test func inAFleetADevicesEntitiesFollowTheDeviceAlone() throws {
        let configuration = try Self.configuration(
            Self.yaml.replacingOccurrences(
                of: "base_topic: gattway }", with: "base_topic: gattway, gateway_id: hall }"))
        let discovery = try #require(HomeAssistantDiscovery(configuration: configuration, version: "1.2.3"))
        let messages = discovery.messages(for: try Self.inventory(configuration))
        let heart = try Self.payload(messages, "homeassistant/sensor/gattway_c47c8d6a3e11/heart_rate/config")
        guard case .array(let availability) = heart["availability"] else {
            Issue.record("no availability list")
            return
        }
        #expect(availability.map { $0["topic"]?.stringValue } == ["gattway/chest-strap/availability"])
        let gatewayEntities = messages.compactMap {
            try? JSONValue(
                parsing: $0.payload, limits: JSONLimits(maximumDepth: 8, maximumWidth: 64, maximumValues: 512))
        }
        .filter { $0["state_topic"]?.stringValue == "gattway/bridge/hall/info" }
        let version = try #require(gatewayEntities.first)
        guard case .array(let versionAvailability) = version["availability"] else {
            Issue.record("no availability list on the gateway's version")
            return
        }
        #expect(versionAvailability.map { $0["topic"]?.stringValue } == ["gattway/bridge/hall/state"])
    }

    @Test func batteryLevelCodecGivesTheBatteryClassInPercent() throws {
        let battery = try Self.payload(try Self.messages(), "homeassistant/sensor/gattway_c47c8d6a3e11/battery/config")
        #expect(battery["device_class"]?.stringValue == "battery")
        #expect(battery["unit_of_measurement"]?.stringValue == "%")
    }

    @Test func everyDeviceEntityFollowsTheDeviceAndTheGateway() throws {
        let heart = try Self.payload(try Self.messages(), "homeassistant/sensor/gattway_c47c8d6a3e11/heart_rate/config")
        #expect(heart["availability_mode"]?.stringValue == "all")
        guard case .array(let availability) = heart["availability"] else {
            Issue.record("no availability list")
            return
        }
        #expect(
            availability.map { $0["topic"]?.stringValue } == [
                "gattway/chest-strap/availability", "gattway/bridge/state",
            ])
        let device = try #require(heart["device"])
        #expect(device["identifiers"] == .array([.string("gattway_c47c8d6a3e11")]))
        #expect(device["connections"] == .array([.array([.string("bluetooth"), .string("C4:7C:8D:6A:3E:11")])]))
        #expect(device["name"]?.stringValue == "chest-strap")
        #expect(device["via_device"]?.stringValue == "gattway_bridge_gattway")
    }

    @Test func aWritableCharacteristicIsATextWhoseCommandsGoToSet() throws {
        let control = try Self.payload(try Self.messages(), "homeassistant/text/gattway_d00d10c40001/control/config")
        #expect(control["command_topic"]?.stringValue == "gattway/lock/control/set")
        #expect(control["state_topic"] == nil)
        #expect(control["optimistic"] == .bool(true))
    }

    @Test func aConfiguredLockMapsItsPayloadsAndState() throws {
        let bolt = try Self.payload(try Self.messages(), "homeassistant/lock/gattway_d00d10c40001/bolt/config")
        #expect(bolt["command_topic"]?.stringValue == "gattway/lock/bolt/set")
        #expect(bolt["state_topic"]?.stringValue == "gattway/lock/bolt")
        #expect(bolt["payload_lock"]?.stringValue == "lock")
        #expect(bolt["payload_unlock"]?.stringValue == "unlock")
        #expect(bolt["state_locked"]?.stringValue == "locked")
        #expect(bolt["optimistic"] == nil)
    }

    @Test func decodedMeasurementsAreSensorsOnTheStateJSONWithTheDecodersClasses() throws {
        let messages = try Self.messages()
        let temperature = try Self.payload(messages, "homeassistant/sensor/gattway_a4c138000001/temperature/config")
        #expect(temperature["state_topic"]?.stringValue == "gattway/thermometer/state")
        #expect(temperature["device_class"]?.stringValue == "temperature")
        #expect(temperature["unit_of_measurement"]?.stringValue == "°C")
        #expect(temperature["name"]?.stringValue == "Room temperature", "the configured name wins")
        #expect(temperature["device"]?["model"]?.stringValue == "BTHome sensor")
        let opening = try Self.payload(messages, "homeassistant/binary_sensor/gattway_a4c138000001/opening/config")
        #expect(opening["device_class"]?.stringValue == "opening")
        #expect(opening["state_class"] == nil)
        #expect(!messages.contains { $0.topic.contains("packet_id") }, "the packet id is no measurement")
    }

    @Test func rssiAndConnectivityAreDiagnostics() throws {
        let messages = try Self.messages()
        let rssi = try Self.payload(messages, "homeassistant/sensor/gattway_c47c8d6a3e11/rssi/config")
        #expect(rssi["state_topic"]?.stringValue == "gattway/chest-strap/advert")
        #expect(rssi["device_class"]?.stringValue == "signal_strength")
        #expect(rssi["entity_category"]?.stringValue == "diagnostic")
        let link = try Self.payload(messages, "homeassistant/binary_sensor/gattway_c47c8d6a3e11/connectivity/config")
        #expect(link["state_topic"]?.stringValue == "gattway/chest-strap/availability")
        #expect(link["payload_on"]?.stringValue == "online")
        guard case .array(let availability) = link["availability"] else {
            Issue.record("no availability list")
            return
        }
        #expect(
            availability.map { $0["topic"]?.stringValue } == ["gattway/bridge/state"],
            "off, not unavailable, when the device is")
    }

    @Test func theGatewayIsADeviceWithItsVersionAndCounts() throws {
        let messages = try Self.messages()
        let version = try Self.payload(messages, "homeassistant/sensor/gattway_bridge_gattway/version/config")
        #expect(version["state_topic"]?.stringValue == "gattway/bridge/info")
        #expect(version["device"]?["sw_version"]?.stringValue == "1.2.3")
        let connected = try Self.payload(
            messages, "homeassistant/sensor/gattway_bridge_gattway/connected_devices/config")
        #expect(connected["state_topic"]?.stringValue == "gattway/bridge/devices")
        _ = try Self.payload(messages, "homeassistant/sensor/gattway_bridge_gattway/tracked_devices/config")
        guard case .array(let availability) = version["availability"] else {
            Issue.record("no availability list")
            return
        }
        #expect(availability.map { $0["topic"]?.stringValue } == ["gattway/bridge/state"])
        let link = try Self.payload(messages, "homeassistant/binary_sensor/gattway_bridge_gattway/connectivity/config")
        #expect(link["state_topic"]?.stringValue == "gattway/bridge/state")
        #expect(link["availability"] == nil, "off, not unavailable, when Gattway is stopped")
    }

    @Test func unmatchedDevicesAreNotAnnouncedButConfiguredAddressesAre() throws {
        let configuration = try Self.configuration()
        var inventory = HomeAssistantInventory()
        inventory.reconciled(with: configuration)
        let topics = try #require(HomeAssistantDiscovery(configuration: configuration, version: "1")).messages(
            for: inventory
        )
        .map(\.topic)
        #expect(topics.contains("homeassistant/sensor/gattway_c47c8d6a3e11/heart_rate/config"))
        #expect(!topics.contains { $0.contains("a4c138000001") })
    }

    @Test func aDeviceRemovedFromTheConfigurationHasItsDiscoveryCleared() throws {
        let running = try Self.configuration()
        var inventory = try Self.inventory(running)
        let before = try #require(HomeAssistantDiscovery(configuration: running, version: "1")).messages(for: inventory)
        inventory.announcedTopics = Set(before.map(\.topic))
        // The file without the lock (a reload or a restart reads it).
        let lockStart = try #require(Self.yaml.range(of: "  - name: lock\n"))
        let lockEnd = try #require(Self.yaml.range(of: "  - name: thermometer\n"))
        let reloaded = try Self.configuration(
            String(Self.yaml[..<lockStart.lowerBound]) + String(Self.yaml[lockEnd.lowerBound...]))
        inventory.reconciled(with: reloaded)
        let after = try #require(HomeAssistantDiscovery(configuration: reloaded, version: "1")).messages(for: inventory)
        let cleared = HomeAssistantDiscovery.topicsToClear(previouslyAnnounced: inventory.announcedTopics, now: after)
        #expect(cleared.contains("homeassistant/text/gattway_d00d10c40001/control/config"))
        #expect(cleared.contains("homeassistant/sensor/gattway_d00d10c40001/rssi/config"))
        #expect(
            cleared.allSatisfy { $0.contains("gattway_d00d10c40001") }, "only the changed entry's entities: \(cleared)")
        #expect(after.contains { $0.topic.contains("gattway_a4c138000001") }, "the others stay")
    }

    @Test func uniqueIDsDependOnlyOnAddressAndNames() throws {
        let first = try Self.messages()
        let second = try Self.messages()
        #expect(first == second)
        #expect(Set(first.map(\.topic)).count == first.count, "one message per entity")
    }

    @Test func aForgedInventoryCannotClearTopicsOutsideDiscovery() throws {
        var inventory = HomeAssistantInventory()
        inventory.announcedTopics = [
            "gattway/lock/control/set", "homeassistant/+/x/config", "homeassistant/sensor/a/b/config",
        ]
        #expect(
            inventory.sanitized(discoveryPrefix: "homeassistant").announcedTopics == ["homeassistant/sensor/a/b/config"]
        )
    }

    @Test func overridesMustFitTheirComponent() throws {
        let text = """
            mqtt: { url: "mqtt://127.0.0.1" }
            devices:
              - address: "AA:BB:CC:DD:EE:01"
                characteristics:
                  - { service: "FFF0", uuid: "FFF1", notify: true, homeassistant: { component: button } }
                  - { service: "FFF0", uuid: "FFF2", write: with_response, codec: utf8, homeassistant: { component: select } }
            """
        #expect(throws: ConfigurationErrors.self) { try BridgeConfiguration(yaml: text) }
        do {
            _ = try BridgeConfiguration(yaml: text)
        } catch {
            #expect(
                error.errors.map(\.description) == [
                    "devices[0].characteristics[0].homeassistant.component: button sends commands, so the characteristic needs write:",
                    "devices[0].characteristics[1].homeassistant.options: is required for component: select",
                ])
        }
    }
}
