import BluetoothCore
import BridgeCore
import MQTTCore

/// One configured characteristic of one configured device, with its topics worked out once.
///
/// A class (immutable, so as good as a value): the value relay looks one up for every notification, and copying
/// the struct retained and released each of the configuration's strings and arrays every time.
final class CharacteristicRoute: Sendable {
    let deviceIndex: Int
    let characteristic: CharacteristicConfiguration
    /// `<base>/<device>/<characteristic>`.
    let valueTopic: String
    let qos: MQTTQoS
    let retain: Bool

    init(deviceIndex: Int, characteristic: CharacteristicConfiguration, valueTopic: String, qos: MQTTQoS, retain: Bool)
    {
        self.deviceIndex = deviceIndex
        self.characteristic = characteristic
        self.valueTopic = valueTopic
        self.qos = qos
        self.retain = retain
    }

    var setTopic: String { valueTopic + "/set" }
    var setResultTopic: String { valueTopic + "/set/result" }
    var getTopic: String { valueTopic + "/get" }
    var getResultTopic: String { valueTopic + "/get/result" }
}

/// The central bridge's topics, derived from the configuration once.
///
/// Devices selected by `match` may resolve to several peripherals; each gets its own device topic (the friendly
/// name for the first, `<name>_<address>` for the others), so routes are kept per configured device and
/// instantiated per device topic.
struct CentralRoutes: Sendable {
    let base: String
    let bridge: TopicLayout
    let qos: MQTTQoS
    let retain: Bool
    let routesByDevice: [[CharacteristicRoute]]
    /// Bridge requests the peripheral bridge answers (`bridge/request/advertise`).
    static let peripheralVerbs: Set<String> = ["advertise"]

    init(configuration: BridgeConfiguration) {
        base = configuration.mqtt.baseTopic
        bridge = TopicLayout(configuration.mqtt)
        qos = MQTTQoS(rawValue: UInt8(configuration.mqtt.qos)) ?? .atLeastOnce
        retain = configuration.mqtt.retain
        var all: [[CharacteristicRoute]] = []
        let qos = self.qos
        let layout = bridge
        for (index, device) in configuration.devices.enumerated() {
            let deviceTopic = device.topicName ?? "device\(index)"
            all.append(
                device.characteristics.map { characteristic in
                    CharacteristicRoute(
                        deviceIndex: index, characteristic: characteristic,
                        valueTopic: layout.value(deviceTopic, characteristic.topicName),
                        qos: qos, retain: characteristic.retain ?? configuration.mqtt.retain)
                })
        }
        routesByDevice = all
    }

    /// The routes of configured device `index` when it is published under `deviceTopic`.
    func routes(ofDevice index: Int, deviceTopic: String) -> [CharacteristicRoute] {
        routesByDevice[index].map { route in
            CharacteristicRoute(
                deviceIndex: index, characteristic: route.characteristic,
                valueTopic: bridge.value(deviceTopic, route.characteristic.topicName), qos: route.qos,
                retain: route.retain)
        }
    }

    func availabilityTopic(_ deviceTopic: String) -> String { bridge.availability(deviceTopic) }
    func advertTopic(_ deviceTopic: String) -> String { bridge.advert(deviceTopic) }
    /// `<base>/<device>/state`: the measurements decoded from the device's advertisements.
    func stateTopic(_ deviceTopic: String) -> String { bridge.value(deviceTopic, "state") }
    var bridgeDevicesTopic: String { bridge.bridgeDevices }
    var bridgeEventTopic: String { bridge.bridgeEvent }
    func bridgeRequestTopic(_ verb: String) -> String { bridge.bridgeRequest(verb) }
    func bridgeResponseTopic(_ verb: String) -> String { bridge.bridgeResponse(verb) }
}
