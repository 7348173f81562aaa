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

    /// `<base>/bridge`, or `<base>/bridge/<gateway>` in a fleet: every topic of the gateway itself lives under it,
    /// so that gateways sharing a base topic never overwrite each other's retained messages and a request reaches
    /// the one gateway it is addressed to.
    package var bridgeLevel: String { gatewayID.map { "\(base)/bridge/\($0)" } ?? "\(base)/bridge" }

    /// The names of the levels right under `bridge/`; none of them can be a gateway id.
    package static let bridgeLevelNames: Set<String> = [
        "state", "info", "devices", "event", "metrics", "health", "sightings", "request", "response",
    ]

    /// `<base>/bridge/state` (`bridge/<gateway>/state` in a fleet): retained online/offline, the Last Will topic.
    package var bridgeState: String { bridgeLevel + "/state" }
    /// `<base>/bridge/info` (retained JSON; per gateway in a fleet).
    package var bridgeInfo: String { bridgeLevel + "/info" }
    /// `<base>/bridge/metrics` (per gateway in a fleet).
    package var bridgeMetrics: String { bridgeLevel + "/metrics" }
    /// `<base>/bridge/health` (retained JSON; per gateway in a fleet).
    package var bridgeHealth: String { bridgeLevel + "/health" }
    /// `<base>/bridge/devices` (retained JSON; per gateway in a fleet).
    package var bridgeDevices: String { bridgeLevel + "/devices" }
    /// `<base>/bridge/event` (per gateway in a fleet).
    package var bridgeEvent: String { bridgeLevel + "/event" }
    /// `<base>/bridge/request/<verb>` (per gateway in a fleet).
    package func bridgeRequest(_ verb: String) -> String { bridgeLevel + "/request/" + verb }
    /// `<base>/bridge/response/<verb>` (per gateway in a fleet).
    package func bridgeResponse(_ verb: String) -> String { bridgeLevel + "/response/" + verb }
    /// The filter that receives every request addressed to this gateway: `<base>/bridge/request/+`, or
    /// `<base>/bridge/<gateway>/request/+` in a fleet.
    package var bridgeRequestFilter: String { bridgeLevel + "/request/+" }

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
