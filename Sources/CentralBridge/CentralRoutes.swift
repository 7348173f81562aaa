import BluetoothCore
import BridgeCore
import MQTTCore

/// One configured characteristic of one configured device, with its topics worked out once.
struct CharacteristicRoute: Sendable {
    let deviceIndex: Int
    let characteristic: CharacteristicConfiguration
    /// `<base>/<device>/<characteristic>`.
    let valueTopic: String
    let qos: MQTTQoS
    let retain: Bool

    var setTopic: String { valueTopic + "/set" }
    var setResultTopic: String { valueTopic + "/set/result" }
    var getTopic: String { valueTopic + "/get" }
}

/// What an incoming message on the bridge's own connection asks for.
enum CentralCommandTarget: Sendable {
    case set(deviceTopic: String, route: Int)
    case get(deviceTopic: String, route: Int)
    case bridgeRequest(verb: String)
}

/// The central bridge's topics, derived from the configuration once.
///
/// Devices selected by `match` may resolve to several peripherals; each gets its own device topic (the friendly
/// name for the first, `<name>_<address>` for the others), so routes are kept per configured device and
/// instantiated per device topic.
struct CentralRoutes: Sendable {
    let base: String
    let qos: MQTTQoS
    let retain: Bool
    let routesByDevice: [[CharacteristicRoute]]
    static let bridgeVerbs = ["scan", "connect", "disconnect", "remove", "devices"]

    init(configuration: BridgeConfiguration) {
        base = configuration.mqtt.baseTopic
        qos = MQTTQoS(rawValue: UInt8(configuration.mqtt.qos)) ?? .atLeastOnce
        retain = configuration.mqtt.retain
        var all: [[CharacteristicRoute]] = []
        for (index, device) in configuration.devices.enumerated() {
            let deviceTopic = device.topicName ?? "device\(index)"
            all.append(device.characteristics.map { characteristic in
                CharacteristicRoute(
                    deviceIndex: index, characteristic: characteristic,
                    valueTopic: "\(configuration.mqtt.baseTopic)/\(deviceTopic)/\(characteristic.topicName)",
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
                valueTopic: "\(base)/\(deviceTopic)/\(route.characteristic.topicName)", qos: route.qos,
                retain: route.retain)
        }
    }

    func availabilityTopic(_ deviceTopic: String) -> String { "\(base)/\(deviceTopic)/availability" }
    func advertTopic(_ deviceTopic: String) -> String { "\(base)/\(deviceTopic)/advert" }
    var bridgeDevicesTopic: String { "\(base)/bridge/devices" }
    var bridgeEventTopic: String { "\(base)/bridge/event" }
    func bridgeRequestTopic(_ verb: String) -> String { "\(base)/bridge/request/\(verb)" }
    func bridgeResponseTopic(_ verb: String) -> String { "\(base)/bridge/response/\(verb)" }

    /// Every topic filter the bridge subscribes to on its own connection.
    func commandFilters(deviceTopics: [(index: Int, topic: String)]) -> [String] {
        var filters = Self.bridgeVerbs.map(bridgeRequestTopic)
        for (index, topic) in deviceTopics {
            for route in routes(ofDevice: index, deviceTopic: topic) {
                // /set is subscribed for every characteristic so that a write to a read-only one gets an error
                // result instead of silence.
                filters.append(route.setTopic)
                filters.append(route.getTopic)
            }
        }
        return filters
    }
}
