/// One application message, published or received.
package struct MQTTMessage: Sendable, Equatable {
    package var topic: String
    package var payload: [UInt8]
    package var qos: MQTTQoS
    package var retain: Bool
    package var properties: MQTTProperties
    /// Set on a received message whose payload exceeded the client's inbound limit: the payload's real size.
    /// `payload` then holds only its first bytes (for a quoted excerpt), never the whole of it.
    package var oversizePayloadLength: Int?

    package init(
        topic: String, payload: [UInt8], qos: MQTTQoS = .atMostOnce, retain: Bool = false,
        properties: MQTTProperties = MQTTProperties()
    ) {
        self.topic = topic
        self.payload = payload
        self.qos = qos
        self.retain = retain
        self.properties = properties
    }

    /// A message whose payload is the UTF-8 bytes of `text`.
    package init(
        topic: String, text: String, qos: MQTTQoS = .atMostOnce, retain: Bool = false,
        properties: MQTTProperties = MQTTProperties()
    ) {
        self.init(topic: topic, payload: Array(text.utf8), qos: qos, retain: retain, properties: properties)
    }

    /// The payload decoded as UTF-8 (invalid sequences are replaced).
    package var payloadText: String { String(decoding: payload, as: UTF8.self) }
}
