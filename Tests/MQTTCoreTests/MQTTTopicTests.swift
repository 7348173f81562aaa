import MQTTCore
import Testing

@Suite struct MQTTTopicTests {
    @Test func acceptsOrdinaryTopics() {
        #expect(MQTTTopic.problem(in: "gattway/kitchen/heart_rate") == nil)
        #expect(MQTTTopic.problem(in: "/") == nil)
        #expect(MQTTTopic.problem(in: "ümlaut/€") == nil)
    }

    @Test func refusesWhatMQTTForbids() {
        #expect(MQTTTopic.problem(in: "") == .empty)
        #expect(MQTTTopic.problem(in: "a/+/b") == .containsWildcard)
        #expect(MQTTTopic.problem(in: "a/#") == .containsWildcard)
        #expect(MQTTTopic.problem(in: "a\u{0}b") == .containsNul)
        #expect(MQTTTopic.problem(in: String(repeating: "x", count: 65_536)) == .tooLong(byteCount: 65_536))
        #expect(MQTTTopic.problem(in: String(repeating: "x", count: 65_535)) == nil)
    }

    @Test func validationErrorNamesTopicAndReason() {
        #expect(throws: MQTTError.invalidTopic("a/+", reason: MQTTTopic.Problem.containsWildcard.description)) {
            try MQTTTopic.validate("a/+")
        }
    }
}
