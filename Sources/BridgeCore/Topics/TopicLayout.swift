/// Builds every MQTT topic Gattway uses from the base topic and (for fleets) the gateway id.
///
/// Topics are plain string concatenations of already validated levels; nothing is parsed at render time.
package struct TopicLayout: Sendable, Hashable {
    /// The base topic, such as `gattway` or `home/ble`.
    package let base: String
    /// The fleet gateway id, when set.
    package let gatewayID: String?

    /// Creates a layout; `base` must already be a valid base topic (see ``TopicNaming``).
    package init(base: String, gatewayID: String? = nil) {
        self.base = base
        self.gatewayID = gatewayID
    }

    /// The layout a validated configuration describes.
    package init(_ settings: MQTTSettings) {
        self.init(base: settings.baseTopic, gatewayID: settings.gatewayID)
    }

    /// `<base>/bridge/state`, or `<base>/bridge/<gateway>/state` in a fleet; also the Last Will topic.
    package var bridgeState: String { gatewayID.map { "\(base)/bridge/\($0)/state" } ?? "\(base)/bridge/state" }
    /// `<base>/bridge/info` (retained JSON).
    package var bridgeInfo: String { "\(base)/bridge/info" }

    /// Per gateway, like the state topic: counters of gateways sharing a base topic must not mix.
    package var bridgeMetrics: String {
        gatewayID.map { "\(base)/bridge/\($0)/metrics" } ?? "\(base)/bridge/metrics"
    }
    /// `<base>/bridge/<gateway>/health` (retained JSON), or `<base>/bridge/health` without a gateway id.
    package var bridgeHealth: String {
        gatewayID.map { "\(base)/bridge/\($0)/health" } ?? "\(base)/bridge/health"
    }
    /// `<base>/bridge/devices` (retained JSON).
    package var bridgeDevices: String { "\(base)/bridge/devices" }
    /// `<base>/bridge/event`.
    package var bridgeEvent: String { "\(base)/bridge/event" }
    /// `<base>/bridge/request/<verb>`.
    package func bridgeRequest(_ verb: String) -> String { "\(base)/bridge/request/\(verb)" }
    /// `<base>/bridge/response/<verb>`.
    package func bridgeResponse(_ verb: String) -> String { "\(base)/bridge/response/\(verb)" }
    /// The filter that receives every bridge request: `<base>/bridge/request/+`.
    package var bridgeRequestFilter: String { "\(base)/bridge/request/+" }

    /// `<base>/<device>`.
    package func device(_ device: String) -> String { "\(base)/\(device)" }
    /// `<base>/<device>/availability` (retained `online`/`offline`).
    package func availability(_ device: String) -> String { "\(base)/\(device)/availability" }
    /// `<base>/<device>/advert` (JSON).
    package func advert(_ device: String) -> String { "\(base)/\(device)/advert" }
    /// `<base>/<device>/<characteristic>`: the value.
    package func value(_ device: String, _ characteristic: String) -> String { "\(base)/\(device)/\(characteristic)" }
    /// `<base>/<device>/<characteristic>/set`: a write.
    package func set(_ device: String, _ characteristic: String) -> String { value(device, characteristic) + "/set" }
    /// `<base>/<device>/<characteristic>/set/result`: the outcome of a write.
    package func setResult(_ device: String, _ characteristic: String) -> String {
        value(device, characteristic) + "/set/result"
    }
    /// `<base>/<device>/<characteristic>/get`: a read request.
    package func get(_ device: String, _ characteristic: String) -> String { value(device, characteristic) + "/get" }
}
