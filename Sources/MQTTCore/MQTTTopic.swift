/// Validation of topic names used for PUBLISH (MQTT 5 §4.7, MQTT 3.1.1 §4.7).
package enum MQTTTopic {
    /// The longest topic an MQTT UTF-8 string can carry (its length is a 16-bit field).
    package static let maximumByteCount = 65_535

    /// Why a topic name cannot be published to.
    package enum Problem: Sendable, Hashable, CustomStringConvertible {
        case empty
        case tooLong(byteCount: Int)
        case containsWildcard
        case containsNul

        package var description: String {
            switch self {
            case .empty: "the topic is empty"
            case .tooLong(let count):
                "the topic is \(count) bytes long, more than the \(MQTTTopic.maximumByteCount) MQTT allows"
            case .containsWildcard: "the topic contains a wildcard ('+' or '#'), which only subscriptions may use"
            case .containsNul: "the topic contains a NUL character"
            }
        }
    }

    /// Returns the first problem that makes `topic` unusable for a PUBLISH, or nil when it is valid.
    package static func problem(in topic: String) -> Problem? {
        // Every publish is checked: scan the bytes in place (native strings are contiguous UTF-8), not through the
        // UTF-8 view's iterator, which cost more than libmosquitto's whole publish.
        topic.utf8.withContiguousStorageIfAvailable(problem(inBytes:)) ?? problem(inBytes: Array(topic.utf8))
    }

    private static func problem(inBytes bytes: some Collection<UInt8>) -> Problem? {
        if bytes.isEmpty { return .empty }
        if bytes.count > maximumByteCount { return .tooLong(byteCount: bytes.count) }
        for byte in bytes {
            switch byte {
            case UInt8(ascii: "+"), UInt8(ascii: "#"): return .containsWildcard
            case 0: return .containsNul
            default: continue
            }
        }
        return nil
    }

    /// Throws `MQTTError.invalidTopic` when `topic` cannot be published to.
    package static func validate(_ topic: String) throws(MQTTError) {
        if let problem = problem(in: topic) { throw MQTTError.invalidTopic(topic, reason: problem.description) }
    }
}
