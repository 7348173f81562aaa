/// The MQTT 5 properties Gattway reads and writes on PUBLISH (and on the Last Will).
///
/// With MQTT 3.1.1 they are not sent; received messages then carry empty properties.
///
/// The properties live behind one copy-on-write reference, absent when none is set: nearly every message Gattway
/// publishes has none, and a message is copied on its way to libmosquitto, so six fields held inline (four of them
/// counted references) cost a retain and a release each on every notification where one absent reference costs
/// nothing.
package struct MQTTProperties: Sendable, Equatable {
    private var storage: Storage?

    /// No property set.
    package init() {}

    package init(
        responseTopic: String? = nil, correlationData: [UInt8]? = nil, userProperties: [(String, String)] = [],
        messageExpiryInterval: UInt32? = nil, contentType: String? = nil, payloadFormatIndicator: UInt8? = nil
    ) {
        let storage = Storage(
            responseTopic: responseTopic, correlationData: correlationData, userProperties: userProperties,
            messageExpiryInterval: messageExpiryInterval, contentType: contentType,
            payloadFormatIndicator: payloadFormatIndicator)
        self.storage = storage.isEmpty ? nil : storage
    }

    /// No property set (the default of every message).
    package static var empty: MQTTProperties { MQTTProperties() }

    /// Where a requester wants the answer (request/response pattern).
    package var responseTopic: String? {
        get { storage?.responseTopic }
        set { update { $0.responseTopic = newValue } }
    }

    /// Opaque bytes the responder echoes so the requester can match answers to requests.
    package var correlationData: [UInt8]? {
        get { storage?.correlationData }
        set { update { $0.correlationData = newValue } }
    }

    /// Name/value pairs in the order they were sent; names may repeat.
    package var userProperties: [(String, String)] {
        get { storage?.userProperties ?? [] }
        set { update { $0.userProperties = newValue } }
    }

    /// Seconds after which the broker discards the message if it is still undelivered.
    package var messageExpiryInterval: UInt32? {
        get { storage?.messageExpiryInterval }
        set { update { $0.messageExpiryInterval = newValue } }
    }

    /// A MIME type describing the payload, such as `application/json`.
    package var contentType: String? {
        get { storage?.contentType }
        set { update { $0.contentType = newValue } }
    }

    /// 0 for unspecified bytes, 1 for UTF-8 text.
    package var payloadFormatIndicator: UInt8? {
        get { storage?.payloadFormatIndicator }
        set { update { $0.payloadFormatIndicator = newValue } }
    }

    /// True when no property is set, so nothing needs to be encoded.
    package var isEmpty: Bool { storage?.isEmpty ?? true }

    package static func == (lhs: MQTTProperties, rhs: MQTTProperties) -> Bool {
        lhs.responseTopic == rhs.responseTopic && lhs.correlationData == rhs.correlationData
            && lhs.userProperties.elementsEqual(rhs.userProperties, by: { $0 == $1 })
            && lhs.messageExpiryInterval == rhs.messageExpiryInterval && lhs.contentType == rhs.contentType
            && lhs.payloadFormatIndicator == rhs.payloadFormatIndicator
    }

    /// Changes the storage in place when this value is its only holder, on a copy otherwise.
    private mutating func update(_ change: (Storage) -> Void) {
        let unique: Storage
        if isKnownUniquelyReferenced(&storage), let storage {
            unique = storage
        } else {
            unique = storage?.copy() ?? Storage()
            storage = unique
        }
        change(unique)
        if unique.isEmpty { storage = nil }
    }
}

extension MQTTProperties {
    /// @unchecked Sendable: a storage is only changed through `update`, while the value holding it is its only
    /// holder; a storage that is shared is never changed, so what another thread sees does not move.
    private final class Storage: @unchecked Sendable {
        var responseTopic: String?
        var correlationData: [UInt8]?
        var userProperties: [(String, String)]
        var messageExpiryInterval: UInt32?
        var contentType: String?
        var payloadFormatIndicator: UInt8?

        init(
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

        var isEmpty: Bool {
            responseTopic == nil && correlationData == nil && userProperties.isEmpty && messageExpiryInterval == nil
                && contentType == nil && payloadFormatIndicator == nil
        }

        func copy() -> Storage {
            Storage(
                responseTopic: responseTopic, correlationData: correlationData, userProperties: userProperties,
                messageExpiryInterval: messageExpiryInterval, contentType: contentType,
                payloadFormatIndicator: payloadFormatIndicator)
        }
    }
}
