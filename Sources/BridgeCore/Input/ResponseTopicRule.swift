package import MQTTCore

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
