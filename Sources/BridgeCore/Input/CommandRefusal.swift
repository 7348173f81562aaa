/// Why a message on a command topic (`/set`, `/get`, `bridge/request/…`) is refused before it is parsed.
package enum CommandRefusal: Sendable, Hashable, CustomStringConvertible {
    /// A retained message: replaying it on every (re)subscription would run the command again.
    case retained
    /// The payload exceeds the limit for its kind.
    case oversize(size: Int, limit: Int)
    /// The Response Topic breaks ``ResponseTopicRule``.
    case forbiddenResponseTopic(problem: String)

    /// Checks a command message: retained first, then size, then the Response Topic (the rule is only built
    /// when there is one).
    package static func check(
        retained: Bool, payloadSize: Int, limit: Int, responseTopic: String?,
        rule: @autoclosure () -> ResponseTopicRule
    ) -> CommandRefusal? {
        if retained { return .retained }
        if payloadSize > limit { return .oversize(size: payloadSize, limit: limit) }
        if let responseTopic, let problem = rule().problem(with: responseTopic) {
            let quoted = PayloadExcerpt.quote(Array(responseTopic.utf8), maximumBytes: 64)
            return .forbiddenResponseTopic(problem: "the Response Topic \(quoted) \(problem)")
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
