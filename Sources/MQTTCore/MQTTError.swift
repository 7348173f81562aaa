/// Everything that can go wrong talking MQTT, each case with the context an operator needs to fix it.
package enum MQTTError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The broker answered CONNECT with a failure reason.
    case connectionRefused(MQTTConnectReason)
    /// No TCP connection could be made (or the TLS handshake failed at the socket level).
    case unreachable(host: String, port: Int, errno: Int32, reason: String)
    /// The TLS configuration (CA, certificate, key) was refused by the library.
    case tlsSetupFailed(reason: String)
    /// A topic or filter that MQTT does not allow.
    case invalidTopic(String, reason: String)
    /// A broker URL that cannot be used.
    case invalidBrokerURL(String, reason: String)
    /// An operation did not complete in time.
    case timeout(operation: String, after: Duration)
    /// An established link (or a connect attempt) ended; `reason` says how (broker DISCONNECT, keepalive, socket).
    case connectionLost(reason: String)
    /// The operation needs a live connection and there is none (e.g. QoS 0 publish while offline).
    case notConnected(operation: String)
    /// The broker refused a subscription in its SUBACK.
    case subscriptionRefused(filter: String, reasonCode: Int)
    /// The client has stopped (its `run()` returned) or has not been started.
    case clientStopped(operation: String)
    /// A libmosquitto call failed; `code` is its MOSQ_ERR_* value and `reason` its text.
    case library(operation: String, code: Int32, reason: String)

    package var description: String {
        switch self {
        case .connectionRefused(let reason): "connection refused by broker: \(reason)"
        case .unreachable(let host, let port, let errno, let reason):
            port == 0
                ? "broker on unix socket \(host) is unreachable: \(reason) (errno \(errno))"
                : "broker \(host):\(port) is unreachable: \(reason) (errno \(errno))"
        case .tlsSetupFailed(let reason): "TLS setup failed: \(reason)"
        case .invalidTopic(let topic, let reason): "invalid topic \"\(topic)\": \(reason)"
        case .invalidBrokerURL(let url, let reason): "invalid broker URL \"\(url)\": \(reason)"
        case .timeout(let operation, let after): "\(operation) timed out after \(after)"
        case .connectionLost(let reason): "connection to the broker lost: \(reason)"
        case .notConnected(let operation): "\(operation) failed: not connected to the broker"
        case .subscriptionRefused(let filter, let code):
            "broker refused the subscription to \"\(filter)\" (reason code \(code))"
        case .clientStopped(let operation): "\(operation) failed: the MQTT client is not running"
        case .library(let operation, let code, let reason): "\(operation) failed: \(reason) (mosquitto error \(code))"
        }
    }

    /// Whether trying again later (after a reconnect) can succeed without an operator changing anything.
    package var isRetriable: Bool {
        switch self {
        case .connectionRefused(let reason): reason.isRetriable
        case .unreachable, .timeout, .notConnected, .connectionLost: true
        case .tlsSetupFailed, .invalidTopic, .invalidBrokerURL, .subscriptionRefused, .clientStopped, .library: false
        }
    }
}
