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
        guard changed || force || !store.hasPublished(routes.availabilityTopic(device.topic)) else { return }
        store.markPublished(routes.availabilityTopic(device.topic))
        outbox.send(MQTTMessage(
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
}
