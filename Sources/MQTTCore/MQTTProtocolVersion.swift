/// The MQTT protocol version spoken to the broker.
package enum MQTTProtocolVersion: Sendable, Hashable, CustomStringConvertible {
    /// MQTT 5: properties, reason codes, receive maximum. The default.
    case v5
    /// MQTT 3.1.1, for older brokers: no properties.
    case v311

    package var description: String {
        switch self {
        case .v5: "MQTT 5"
        case .v311: "MQTT 3.1.1"
        }
    }
}
