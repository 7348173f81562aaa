import CMosquitto
import Glibc
import MQTTCore

/// Converts `MQTTProperties` to and from libmosquitto's `mosquitto_property` lists.
enum MosquittoPropertyList {
    private static func id(_ property: mqtt5_property) -> Int32 { Int32(property.rawValue) }

    /// Builds a list the caller must free with `mosquitto_property_free_all` (or hand to a libmosquitto call that
    /// takes ownership). Returns nil for empty properties.
    static func make(_ properties: MQTTProperties) throws(MQTTError) -> OpaquePointer? {
        if properties.isEmpty { return nil }
        var list: OpaquePointer?
        func check(_ rc: Int32, _ what: String) throws(MQTTError) {
            guard rc == MOSQ_ERR_SUCCESS.rawValue else {
                mosquitto_property_free_all(&list)
                throw MosquittoResult.error(rc, operation: "adding the \(what) property")
            }
        }
        if let topic = properties.responseTopic {
            try check(mosquitto_property_add_string(&list, id(MQTT_PROP_RESPONSE_TOPIC), topic), "response topic")
        }
        if let data = properties.correlationData {
            guard data.count <= Int(UInt16.max) else {
                mosquitto_property_free_all(&list)
                throw MQTTError.library(
                    operation: "adding the correlation data property", code: MOSQ_ERR_INVAL.rawValue,
                    reason: "correlation data is \(data.count) bytes, more than 65535")
            }
            let rc = data.withUnsafeBytes {
                mosquitto_property_add_binary(&list, id(MQTT_PROP_CORRELATION_DATA), $0.baseAddress, UInt16(data.count))
            }
            try check(rc, "correlation data")
        }
        for (name, value) in properties.userProperties {
            try check(mosquitto_property_add_string_pair(&list, id(MQTT_PROP_USER_PROPERTY), name, value), "user")
        }
        if let expiry = properties.messageExpiryInterval {
            try check(
                mosquitto_property_add_int32(&list, id(MQTT_PROP_MESSAGE_EXPIRY_INTERVAL), expiry), "message expiry")
        }
        if let type = properties.contentType {
            try check(mosquitto_property_add_string(&list, id(MQTT_PROP_CONTENT_TYPE), type), "content type")
        }
        if let indicator = properties.payloadFormatIndicator {
            try check(
                mosquitto_property_add_byte(&list, id(MQTT_PROP_PAYLOAD_FORMAT_INDICATOR), indicator), "payload format")
        }
        return list
    }

    /// Copies the properties Gattway understands out of a received list (values are malloc'd by the reader and
    /// freed here).
    static func read(_ list: OpaquePointer?) -> MQTTProperties {
        var properties = MQTTProperties()
        guard let list else { return properties }
        properties.responseTopic = readString(list, MQTT_PROP_RESPONSE_TOPIC)
        properties.contentType = readString(list, MQTT_PROP_CONTENT_TYPE)
        var data: UnsafeMutableRawPointer?
        var length: UInt16 = 0
        if mosquitto_property_read_binary(list, id(MQTT_PROP_CORRELATION_DATA), &data, &length, false) != nil {
            properties.correlationData = data.map { Array(UnsafeRawBufferPointer(start: $0, count: Int(length))) } ?? []
            free(data)
        }
        var expiry: UInt32 = 0
        if mosquitto_property_read_int32(list, id(MQTT_PROP_MESSAGE_EXPIRY_INTERVAL), &expiry, false) != nil {
            properties.messageExpiryInterval = expiry
        }
        var indicator: UInt8 = 0
        if mosquitto_property_read_byte(list, id(MQTT_PROP_PAYLOAD_FORMAT_INDICATOR), &indicator, false) != nil {
            properties.payloadFormatIndicator = indicator
        }
        // Walk user properties in order: each read starts from the property the previous one returned.
        var cursor: OpaquePointer? = list
        var skipFirst = false
        while let start = cursor {
            var name: UnsafeMutablePointer<CChar>?
            var value: UnsafeMutablePointer<CChar>?
            guard
                let found = mosquitto_property_read_string_pair(
                    start, id(MQTT_PROP_USER_PROPERTY), &name, &value, skipFirst)
            else { break }
            properties.userProperties.append(
                (name.map { String(cString: $0) } ?? "", value.map { String(cString: $0) } ?? ""))
            free(name)
            free(value)
            cursor = found
            skipFirst = true
        }
        return properties
    }

    private static func readString(_ list: OpaquePointer, _ property: mqtt5_property) -> String? {
        var value: UnsafeMutablePointer<CChar>?
        guard mosquitto_property_read_string(list, id(property), &value, false) != nil else { return nil }
        defer { free(value) }
        return value.map { String(cString: $0) } ?? ""
    }
}
