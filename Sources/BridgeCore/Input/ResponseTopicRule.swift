import MQTTCore

/// Which MQTT 5 Response Topics Gattway agrees to publish a reply on.
///
/// A requester chooses the Response Topic, but Gattway publishes with its own rights. Replies therefore never go
/// under Gattway's base topic (where they could pose as a value, an availability or a command) and never to a
/// topic matching a filter Gattway subscribes to (where Gattway, or its other connection, would receive its own
/// reply as a command). Everything else is the requester's business.
package struct ResponseTopicRule: Sendable {
    /// Gattway's base topic; nothing at or below it is a valid Response Topic.
    package let baseTopic: String
    /// Every filter any of Gattway's connections subscribes to.
    package let subscriptions: [MQTTTopicFilter]

    package init(baseTopic: String, subscriptions: [MQTTTopicFilter]) {
        self.baseTopic = baseTopic
        self.subscriptions = subscriptions
    }

    /// Nil when a reply may be published on `topic`, else why not (for the error result).
    package func problem(with topic: String) -> String? {
        if let problem = MQTTTopic.problem(in: topic) { return "is not a valid topic name (\(problem))" }
        if topic.hasPrefix("$") { return "is a broker topic ($…)" }
        if topic == baseTopic || topic.hasPrefix(baseTopic + "/") {
            return "lies under Gattway's base topic \(baseTopic)/"
        }
        if let filter = subscriptions.first(where: { $0.matches(topic) }) {
            return "matches \(filter), which Gattway subscribes to"
        }
        return nil
    }
}

/// Why a message on a command topic (`/set`, `/get`, `bridge/request/…`) is refused before it is parsed.
package enum CommandRefusal: Sendable, Hashable, CustomStringConvertible {
    /// A retained message: replaying it on every (re)subscription would run the command again.
    case retained
    /// The payload exceeds the limit for its kind.
    case oversize(size: Int, limit: Int)
    /// The Response Topic breaks ``ResponseTopicRule``.
    case forbiddenResponseTopic(problem: String)

    /// Checks a command message: retained first, then size, then the Response Topic.
    package static func check(
        retained: Bool, payloadSize: Int, limit: Int, responseTopic: String?, rule: ResponseTopicRule
    ) -> CommandRefusal? {
        if retained { return .retained }
        if payloadSize > limit { return .oversize(size: payloadSize, limit: limit) }
        if let responseTopic, let problem = rule.problem(with: responseTopic) {
            return .forbiddenResponseTopic(problem: "the Response Topic \(PayloadExcerpt.quote(Array(responseTopic.utf8), maximumBytes: 64)) \(problem)")
        }
        return nil
    }

    /// The `reason` dimension of the refusal counter.
    package var metricReason: String {
        switch self {
        case .retained: "retained"
        case .oversize: "oversize"
        case .forbiddenResponseTopic: "response_topic"
        }
    }

    /// The `error` of the error result: `gattway.Error.<Kind>`.
    package var errorKind: String {
        switch self {
        case .retained: "RetainedCommand"
        case .oversize: "PayloadTooLarge"
        case .forbiddenResponseTopic: "ForbiddenResponseTopic"
        }
    }

    package var description: String {
        switch self {
        case .retained: "retained messages are never executed as commands"
        case .oversize(let size, let limit): "the payload has \(size) bytes; at most \(limit) are accepted here"
        case .forbiddenResponseTopic(let problem): problem
        }
    }
}
