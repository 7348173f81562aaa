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
        var writer = JSONWriter()
        writer.beginObject()
        writer.field("type", type)
        writer.field("device", device)
        if let reason { writer.field("reason", reason) }
        if let error {
            writer.field("error", error.name)
            writer.field("message", error.message)
        }
        writer.endObject()
        outbox.send(MQTTMessage(topic: routes.bridgeEventTopic, payload: writer.bytes, qos: .atMostOnce))
    }

    /// `bridge/info`: what this gateway is and what it is configured to do.
    func bridgeInfoPayload() -> [UInt8] {
        var writer = JSONWriter(reservingCapacity: 256)
        writer.beginObject()
        writer.field("version", version)
        if let gateway = configuration.mqtt.gatewayID { writer.field("gateway_id", gateway) }
        writer.field("base_topic", configuration.mqtt.baseTopic)
        writer.field("adapter", configuration.bluetooth.adapter)
        writer.key("configured_devices")
        writer.beginArray()
        for device in configuration.devices { writer.value(device.topicName ?? "(match)") }
        writer.endArray()
        writer.field("peripheral", configuration.peripheral != nil)
        writer.endObject()
        return writer.bytes
    }
}
