/// The MQTT 5 properties Gattway reads and writes on PUBLISH (and on the Last Will).
///
/// With MQTT 3.1.1 they are not sent; received messages then carry empty properties.
package struct MQTTProperties: Sendable, Equatable {
    /// Where a requester wants the answer (request/response pattern).
    package var responseTopic: String?
    /// Opaque bytes the responder echoes so the requester can match answers to requests.
    package var correlationData: [UInt8]?
    /// Name/value pairs in the order they were sent; names may repeat.
    package var userProperties: [(String, String)]
    /// Seconds after which the broker discards the message if it is still undelivered.
    package var messageExpiryInterval: UInt32?
    /// A MIME type describing the payload, such as `application/json`.
    package var contentType: String?
    /// 0 for unspecified bytes, 1 for UTF-8 text.
    package var payloadFormatIndicator: UInt8?

    package init(
        responseTopic: String? = nil, correlationData: [UInt8]? = nil, userProperties: [(String, String)] = [],
        messageExpiryInterval: UInt32? = nil, contentType: String? = nil, payloadFormatIndicator: UInt8? = nil
    ) {
        self.responseTopic = responseTopic
        self.correlationData = correlationData
        self.userProperties = userProperties
        self.messageExpiryInterval = messageExpiryInterval
        self.contentType = contentType
        self.payloadFormatIndicator = payloadFormatIndicator
    }

    /// No property set. The default of every message: a stored value costs a copy where building one through
    /// the initializer's six default arguments cost about 250 instructions per published notification.
    package static let empty = MQTTProperties()

    /// True when no property is set, so nothing needs to be encoded.
    package var isEmpty: Bool {
        responseTopic == nil && correlationData == nil && userProperties.isEmpty && messageExpiryInterval == nil
            && contentType == nil && payloadFormatIndicator == nil
    }

    package static func == (lhs: MQTTProperties, rhs: MQTTProperties) -> Bool {
        lhs.responseTopic == rhs.responseTopic && lhs.correlationData == rhs.correlationData
            && lhs.userProperties.elementsEqual(rhs.userProperties, by: { $0 == $1 })
            && lhs.messageExpiryInterval == rhs.messageExpiryInterval && lhs.contentType == rhs.contentType
            && lhs.payloadFormatIndicator == rhs.payloadFormatIndicator
    }
}
