/// Metadata keys for the Mosquitto module's log lines.
enum LogKey {
    static let broker = "mqtt.broker"
    static let clientID = "mqtt.client_id"
    static let topic = "mqtt.topic"
    static let filter = "mqtt.filter"
    static let reasonCode = "mqtt.reason_code"
    static let delay = "mqtt.retry_delay"
    static let error = "error"
    static let buffered = "mqtt.inbound.buffered"
}
