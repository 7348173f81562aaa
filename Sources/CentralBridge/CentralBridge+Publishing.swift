import BluetoothCore
import BridgeCore
import Logging
import MQTTCore

extension CentralBridge {
    /// A characteristic's value changed through a PropertiesChanged that the value tap left to the object tree
    /// (one that carried other properties along with `Value`).
    func characteristicValueChanged(_ characteristicPath: String, _ value: [UInt8]) {
        values.relay(value, ofCharacteristic: characteristicPath)
    }

    /// Publishes `<device>/availability` (retained) when it changed, or always with `force`.
    func publishAvailability(_ path: String, online: Bool, force: Bool = false) {
        guard var device = devices[path] else { return }
        let changed = device.online != online
        device.online = online
        devices[path] = device
        // In a fleet a device's availability is its owner's to say.
        guard fleetAllows(path) else { return }
        guard changed || force || !store.hasPublished(routes.availabilityTopic(device.topic)) else { return }
        store.markPublished(routes.availabilityTopic(device.topic))
        outbox.send(
            MQTTMessage(
                topic: routes.availabilityTopic(device.topic), text: online ? "online" : "offline", qos: .atLeastOnce,
                retain: true))
        if changed { markDevicesListDirty() }
    }

    /// Publishes a `bridge/event` (not retained).
    func publishEvent(type: String, device: String, error: CommandFailure? = nil, reason: String? = nil) {
        let event = BridgeEvent(type: type, device: device, reason: reason, error: error?.name, message: error?.message)
        outbox.send(MQTTMessage(topic: routes.bridgeEventTopic, payload: event.payload, qos: .atMostOnce))
    }

    /// `bridge/info`: what this gateway is and what it is configured to do.
    func bridgeInfoPayload() -> [UInt8] {
        BridgeInfo(
            version: version, gatewayID: configuration.mqtt.gatewayID, baseTopic: configuration.mqtt.baseTopic,
            adapter: configuration.bluetooth.adapter,
            configuredDevices: configuration.devices.map { $0.topicName ?? "(match)" },
            peripheral: configuration.peripheral != nil
        ).payload
    }
}
