import BlueZ
import BridgeCore
import Logging
import MQTTCore

extension CentralBridge {
    /// A characteristic's value changed through PropertiesChanged: a StartNotify notification or a read.
    func characteristicValueChanged(_ characteristicPath: String, _ value: [UInt8]) {
        let devicePath = tree.devicePath(ofGATTObject: characteristicPath)
        guard let device = devices[devicePath], let index = device.valueRoutes[characteristicPath] else { return }
        let route = device.routes[index]
        guard let payload = try? route.characteristic.codec.decode(value) else {
            metrics.decodeFailures.increment()
            logger.debug("value.decode.failed", metadata: ["mqtt.topic": "\(route.valueTopic)"])
            return
        }
        if route.retain, let previous = store.lastValue(of: route.valueTopic), previous == value,
            !store.hasPublished(route.valueTopic)
        {
            store.markPublished(route.valueTopic)
            return
        }
        store.markPublished(route.valueTopic)
        store.setLastValue(value, of: route.valueTopic)
        metrics.notifications.increment()
        outbox.send(MQTTMessage(topic: route.valueTopic, payload: payload, qos: route.qos, retain: route.retain))
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
    func publishEvent(type: String, device: String, error: CommandFailure? = nil) {
        var writer = JSONWriter()
        writer.beginObject()
        writer.field("type", type)
        writer.field("device", device)
        if let error {
            writer.field("error", error.name)
            writer.field("message", error.message)
        }
        writer.endObject()
        outbox.send(MQTTMessage(topic: routes.bridgeEventTopic, payload: writer.bytes, qos: .atMostOnce))
    }
}
