import CMosquitto
import Glibc
import MQTTCore

/// The one place where libmosquitto's `MOSQ_ERR_*` codes become `MQTTError`s.
enum MosquittoResult {
    static var success: Int32 { MOSQ_ERR_SUCCESS.rawValue }

    /// libmosquitto's description of `rc`, or the C library's for `MOSQ_ERR_ERRNO`.
    static func text(_ rc: Int32) -> String {
        if rc == MOSQ_ERR_ERRNO.rawValue { return String(cString: strerror(errno)) }
        return String(cString: mosquitto_strerror(rc))
    }

    static func error(_ rc: Int32, operation: String) -> MQTTError {
        if rc == MOSQ_ERR_NO_CONN.rawValue { return .notConnected(operation: operation) }
        return .library(operation: operation, code: rc, reason: text(rc))
    }

    static func check(_ rc: Int32, operation: String) throws(MQTTError) {
        if rc != MOSQ_ERR_SUCCESS.rawValue { throw error(rc, operation: operation) }
    }

    /// The error for a failed TCP connect: the errno text for system errors, libmosquitto's text otherwise.
    static func unreachable(_ rc: Int32, broker: MQTTBrokerURL) -> MQTTError {
        let code = rc == MOSQ_ERR_ERRNO.rawValue ? errno : 0
        return .unreachable(host: broker.host, port: broker.port, errno: code, reason: text(rc))
    }
}
