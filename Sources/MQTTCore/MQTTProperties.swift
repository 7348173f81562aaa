/// The MQTT 5 properties Gattway reads and writes on PUBLISH (and on the Last Will).
///
/// With MQTT 3.1.1 they are not sent; received messages then carry empty properties.
///
/// The properties live behind one immutable reference, absent when none is set: nearly every message Gattway
/// publishes has none, and a message is copied on its way to libmosquitto, so six fields held inline (four of them
/// counted references) cost a retain and a release each on every notification where one absent reference costs
/// nothing. Setting a property (rare: a reply's correlation, a will) makes a new reference.
package struct MQTTProperties: Sendable, Equatable {
    /// Nil exactly when no property is set.
    private var storage: Storage?

    /// No property set.
    package init() {}

    package init(
        responseTopic: String? = nil, correlationData: [UInt8]? = nil, userProperties: [(String, String)] = [],
        messageExpiryInterval: UInt32? = nil, contentType: String? = nil, payloadFormatIndicator: UInt8? = nil
    ) {
        self.fields = Fields(
            responseTopic: responseTopic, correlationData: correlationData, userProperties: userProperties,
            messageExpiryInterval: messageExpiryInterval, contentType: contentType,
            payloadFormatIndicator: payloadFormatIndicator)
    }

    /// No property set (the default of every message).
    package static var empty: MQTTProperties { MQTTProperties() }

    /// Where a requester wants the answer (request/response pattern).
    package var responseTopic: String? {
        get { storage?.fields.responseTopic }
        set { fields.responseTopic = newValue }
    }

    /// Opaque bytes the responder echoes so the requester can match answers to requests.
    package var correlationData: [UInt8]? {
        get { storage?.fields.correlationData }
        set { fields.correlationData = newValue }
    }

    /// Name/value pairs in the order they were sent; names may repeat.
    package var userProperties: [(String, String)] {
        get { storage?.fields.userProperties ?? [] }
        set { fields.userProperties = newValue }
    }

    /// Seconds after which the broker discards the message if it is still undelivered.
    package var messageExpiryInterval: UInt32? {
        get { storage?.fields.messageExpiryInterval }
        set { fields.messageExpiryInterval = newValue }
    }

    /// A MIME type describing the payload, such as `application/json`.
    package var contentType: String? {
        get { storage?.fields.contentType }
        set { fields.contentType = newValue }
    }

    /// 0 for unspecified bytes, 1 for UTF-8 text.
    package var payloadFormatIndicator: UInt8? {
        get { storage?.fields.payloadFormatIndicator }
        set { fields.payloadFormatIndicator = newValue }
    }

    /// True when no property is set, so nothing needs to be encoded.
    package var isEmpty: Bool { storage == nil }

    package static func == (lhs: MQTTProperties, rhs: MQTTProperties) -> Bool {
        lhs.fields == rhs.fields
    }

    /// All six, read from the reference or empty; set through a new reference, or none when all are empty.
    private var fields: Fields {
        get { storage?.fields ?? Fields() }
        set { storage = newValue.isEmpty ? nil : Storage(fields: newValue) }
    }
}

extension MQTTProperties {
    private struct Fields: Equatable {
        var responseTopic: String?
        var correlationData: [UInt8]?
        var userProperties: [(String, String)] = []
        var messageExpiryInterval: UInt32?
        var contentType: String?
        var payloadFormatIndicator: UInt8?

        var isEmpty: Bool { self == Fields() }

        static func == (lhs: Fields, rhs: Fields) -> Bool {
            lhs.responseTopic == rhs.responseTopic && lhs.correlationData == rhs.correlationData
                && lhs.userProperties.elementsEqual(rhs.userProperties, by: { $0 == $1 })
                && lhs.messageExpiryInterval == rhs.messageExpiryInterval && lhs.contentType == rhs.contentType
                && lhs.payloadFormatIndicator == rhs.payloadFormatIndicator
        }
    }

    private final class Storage: Sendable {
        let fields: Fields

        init(fields: Fields) {
            self.fields = fields
        }
    }
}
