/// MQTT 5 subscription options (MQTT 5.0 §3.8.3.1). MQTT 3.1.1 has none; clients then send a plain subscription.
package struct MQTTSubscriptionOptions: Sendable, Hashable {
    /// No Local: the broker does not send this client its own publishes on the filter.
    package var noLocal: Bool
    /// Retain Handling 2: the broker sends no retained message when the subscription is made.
    package var neverSendRetained: Bool

    package init(noLocal: Bool = false, neverSendRetained: Bool = false) {
        self.noLocal = noLocal
        self.neverSendRetained = neverSendRetained
    }

    /// Plain subscription: retained messages are sent on subscribe, own publishes are received.
    package static let plain = MQTTSubscriptionOptions()
    /// For command topics: never a retained command, never Gattway's own publish.
    package static let commands = MQTTSubscriptionOptions(noLocal: true, neverSendRetained: true)
    /// For value sources: retained values are wanted (the current value), own publishes are not.
    package static let values = MQTTSubscriptionOptions(noLocal: true)

    /// The options byte's upper bits, as `mosquitto_subscribe_v5` takes them (QoS is passed separately).
    /// - SeeAlso: MQTT 5.0 §3.8.3.1: No Local is bit 2, Retain Handling bits 4–5.
    package var bits: Int32 { (noLocal ? 0x04 : 0) | (neverSendRetained ? 0x20 : 0) }
}
