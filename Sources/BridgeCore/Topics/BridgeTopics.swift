/// The bridge-level topics under the base topic (design: "MQTT interface").
package struct BridgeTopics: Sendable, Hashable {
    package let base: String
    /// Set when several gateways share a base topic: their state topics are then kept apart.
    package let gatewayID: String?

    package init(base: String, gatewayID: String?) {
        self.base = base
        self.gatewayID = gatewayID
    }

    package init(_ mqtt: MQTTSettings) {
        self.init(base: mqtt.baseTopic, gatewayID: mqtt.gatewayID)
    }

    /// `<base>/bridge/state`, or `<base>/bridge/<gateway>/state` for a fleet: retained online/offline, the Last Will.
    package var state: String { gatewayID.map { "\(base)/bridge/\($0)/state" } ?? "\(base)/bridge/state" }
    package var info: String { gatewayID.map { "\(base)/bridge/\($0)/info" } ?? "\(base)/bridge/info" }
    package var devices: String { "\(base)/bridge/devices" }
    package var event: String { "\(base)/bridge/event" }
    package func request(_ verb: String) -> String { "\(base)/bridge/request/\(verb)" }
    package func response(_ verb: String) -> String { "\(base)/bridge/response/\(verb)" }
}
