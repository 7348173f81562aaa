/// A subscription filter, possibly with `+` (one level) and `#` (this level and all below) wildcards.
///
/// Matching follows MQTT 5 §4.7: `sport/#` also matches `sport`; `+` matches an empty level; a filter that starts with
/// a wildcard never matches a topic that starts with `$` (broker-internal topics such as `$SYS/...`).
package struct MQTTTopicFilter: Sendable, Hashable, CustomStringConvertible {
    package let rawValue: String
    private let levels: [Substring]

    /// Why a filter string is not a valid subscription filter.
    package enum Problem: Sendable, Hashable, CustomStringConvertible {
        case empty
        case tooLong(byteCount: Int)
        case containsNul
        case misplacedMultiLevelWildcard
        case wildcardInsideLevel

        package var description: String {
            switch self {
            case .empty: "the filter is empty"
            case .tooLong(let count):
                "the filter is \(count) bytes long, more than the \(MQTTTopic.maximumByteCount) MQTT allows"
            case .containsNul: "the filter contains a NUL character"
            case .misplacedMultiLevelWildcard: "'#' may only be the last level of a filter"
            case .wildcardInsideLevel: "a wildcard ('+' or '#') must fill a whole level, as in 'a/+/c'"
            }
        }
    }

    /// Parses `filter`, throwing `MQTTError.invalidTopic` with the reason when it is not a valid filter.
    package init(_ filter: String) throws(MQTTError) {
        if let problem = Self.problem(in: filter) { throw MQTTError.invalidTopic(filter, reason: problem.description) }
        rawValue = filter
        levels = filter.split(separator: "/", omittingEmptySubsequences: false)
    }

    /// Returns the first problem with `filter`, or nil when it is a valid subscription filter.
    package static func problem(in filter: String) -> Problem? {
        let count = filter.utf8.count
        if count == 0 { return .empty }
        if count > MQTTTopic.maximumByteCount { return .tooLong(byteCount: count) }
        if filter.utf8.contains(0) { return .containsNul }
        let levels = filter.split(separator: "/", omittingEmptySubsequences: false)
        for (index, level) in levels.enumerated() {
            if level.contains("#") {
                if level != "#" { return .wildcardInsideLevel }
                if index != levels.count - 1 { return .misplacedMultiLevelWildcard }
            }
            if level.contains("+") && level != "+" { return .wildcardInsideLevel }
        }
        return nil
    }

    /// True when a message published to `topic` is delivered to a subscription with this filter.
    package func matches(_ topic: String) -> Bool {
        let topicLevels = topic.split(separator: "/", omittingEmptySubsequences: false)
        // Wildcards at the first level do not match `$` topics, so `#` does not receive `$SYS/...`.
        if topic.hasPrefix("$"), let first = levels.first, first == "+" || first == "#" { return false }
        var index = 0
        while index < levels.count {
            let level = levels[index]
            if level == "#" { return true }  // also matches the parent level itself: `a/#` matches `a`
            guard index < topicLevels.count else { return false }
            if level != "+" && level != topicLevels[index] { return false }
            index += 1
        }
        return index == topicLevels.count
    }

    /// True when the filter contains `+` or `#`.
    package var hasWildcards: Bool { levels.contains { $0 == "+" || $0 == "#" } }

    package var description: String { rawValue }
}
