import BluetoothCore
import BridgeCore
import Logging
import MQTTCore

/// Home Assistant MQTT discovery: announces the configured devices, their entities and the gateway (retained, under
/// the discovery prefix) after each broker connect, when Home Assistant says `online` on its status topic, after a
/// reload, when a `match` device is first tracked and when a decoded measurement is first seen; clears (empty
/// retained message) what is no longer configured. The messages themselves come from ``HomeAssistantDiscovery``.
extension CentralBridge {
    /// How long announcements are gathered before publishing, so that devices appearing together (a start, a
    /// reload, a scan) cost one round.
    static let homeAssistantCoalescing = Duration.milliseconds(250)

    /// The broker (re)connected: follow Home Assistant's status and announce everything again (a broker without
    /// persistence may have lost the retained discovery).
    func homeAssistantBrokerConnected() async {
        guard let discovery = homeAssistant.discovery else { return }
        homeAssistant.load(directory: configuration.stateDirectory, logger: logger)
        let filter = discovery.settings.statusTopic
        if !homeAssistant.statusSubscribed {
            homeAssistant.statusSubscribed = true
            do { try await mqtt.subscribe(filter, qos: .atLeastOnce, options: .values) } catch {
                // Remembered by the client: it is subscribed again on the next connect.
                logger.warning("mqtt.subscribe.failed", metadata: ["mqtt.topic": "\(filter)", "error": "\(error)"])
            }
        }
        publishHomeAssistantDiscovery(force: true)
    }

    /// Whether `message` is Home Assistant's status (it is then handled here): `online` calls for the discovery
    /// messages again, since Home Assistant forgets non-retained state when it restarts.
    func homeAssistantStatusReceived(_ message: MQTTMessage) -> Bool {
        guard let discovery = homeAssistant.discovery, message.topic == discovery.settings.statusTopic else {
            return false
        }
        if message.payload == Array("online".utf8) {
            logger.info("homeassistant.online")
            publishHomeAssistantDiscovery(force: true)
        }
        return true
    }

    /// A device was matched to a configured entry.
    func homeAssistantDeviceTracked(_ path: String) {
        guard homeAssistant.discovery != nil, let device = devices[path] else { return }
        // Devices may be seen before the broker connects: what an earlier run saved is read first, not over them.
        homeAssistant.load(directory: configuration.stateDirectory, logger: logger)
        let configured = configuration.devices[device.configIndex]
        let name = tree.devices[path]?.name
        if homeAssistant.inventory.deviceTracked(
            address: device.address, topic: device.topic, entry: configured, advertisedName: name)
        {
            scheduleHomeAssistantDiscovery()
        }
    }

    /// A device's advertisement decoded: a measurement seen for the first time gets its entity.
    func homeAssistantMeasurementsDecoded(_ path: String, _ decoded: DecodedAdvertisement) {
        guard homeAssistant.discovery != nil, let device = devices[path] else { return }
        if homeAssistant.inventory.measurementsSeen(decoded, address: device.address) {
            scheduleHomeAssistantDiscovery()
        }
    }

    /// The devices were reloaded: entries gone or changed have their entities cleared, new ones announced.
    func homeAssistantReloaded() {
        guard homeAssistant.discovery != nil else { return }
        homeAssistant.discovery = HomeAssistantDiscovery(configuration: configuration, version: version)
        publishHomeAssistantDiscovery(force: false)
    }

    private func scheduleHomeAssistantDiscovery() {
        guard !homeAssistant.publishScheduled else { return }
        homeAssistant.publishScheduled = true
        spawn {
            try? await Task.sleep(for: Self.homeAssistantCoalescing)
            await self.publishHomeAssistantDiscovery(force: false)
        }
    }

    /// Publishes every discovery message that changed (all of them with `force`) and clears the topics announced
    /// before that are no longer part of the discovery; the inventory is saved afterwards.
    func publishHomeAssistantDiscovery(force: Bool) {
        homeAssistant.publishScheduled = false
        guard let discovery = homeAssistant.discovery, !shuttingDown else { return }
        homeAssistant.load(directory: configuration.stateDirectory, logger: logger)
        homeAssistant.inventory.reconciled(with: configuration)
        let messages = discovery.messages(for: homeAssistant.inventory)
        let cleared = HomeAssistantDiscovery.topicsToClear(
            previouslyAnnounced: homeAssistant.inventory.announcedTopics, now: messages)
        for topic in cleared {
            outbox.send(MQTTMessage(topic: topic, payload: [], qos: .atLeastOnce, retain: true))
            homeAssistant.published[topic] = nil
        }
        var sent = 0
        for message in messages where force || homeAssistant.published[message.topic] != message.payload {
            outbox.send(MQTTMessage(topic: message.topic, payload: message.payload, qos: .atLeastOnce, retain: true))
            homeAssistant.published[message.topic] = message.payload
            sent += 1
        }
        let announced = Set(messages.map(\.topic))
        if announced != homeAssistant.inventory.announcedTopics || sent > 0 {
            homeAssistant.inventory.announcedTopics = announced
            homeAssistant.save(directory: configuration.stateDirectory, logger: logger)
        }
        if sent > 0 || !cleared.isEmpty {
            logger.info(
                "homeassistant.discovery.published", metadata: ["entities": "\(sent)", "cleared": "\(cleared.count)"])
        }
    }
}
