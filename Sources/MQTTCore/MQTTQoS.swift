/// MQTT quality of service: how hard the broker and client try to deliver a message.
package enum MQTTQoS: UInt8, Sendable, Hashable, Comparable, CaseIterable, CustomStringConvertible {
    /// Fire and forget: no acknowledgement, lost if the link drops.
    case atMostOnce = 0
    /// Acknowledged by PUBACK; may arrive twice after a reconnect.
    case atLeastOnce = 1
    /// Four-way handshake; delivered exactly once.
    case exactlyOnce = 2

    package static func < (lhs: MQTTQoS, rhs: MQTTQoS) -> Bool { lhs.rawValue < rhs.rawValue }
    // Declared on the type, not left to the protocols' defaults: from another module those ran through the witness
    // tables, and every publish compares its QoS a few times.
    package static func > (lhs: MQTTQoS, rhs: MQTTQoS) -> Bool { lhs.rawValue > rhs.rawValue }
    package static func == (lhs: MQTTQoS, rhs: MQTTQoS) -> Bool { lhs.rawValue == rhs.rawValue }

    package var description: String { "QoS \(rawValue)" }
}
