import MQTTCore
import Testing

@Suite struct MQTTPropertiesTests {
    @Test func aCopyIsChangedWithoutTheOriginal() {
        let original = MQTTProperties(responseTopic: "reply/1", correlationData: [1, 2])
        var copy = original
        copy.responseTopic = "reply/2"
        copy.userProperties.append(("k", "v"))
        #expect(original.responseTopic == "reply/1")
        #expect(original.userProperties.isEmpty)
        #expect(copy.responseTopic == "reply/2")
        #expect(copy.correlationData == [1, 2])
        #expect(copy.userProperties.count == 1)
        #expect(copy != original)
    }

    @Test func everyFieldIsKeptAndCompared() {
        var properties = MQTTProperties()
        properties.responseTopic = "r"
        properties.correlationData = [9]
        properties.userProperties = [("a", "b"), ("a", "c")]
        properties.messageExpiryInterval = 60
        properties.contentType = "application/json"
        properties.payloadFormatIndicator = 1
        let built = MQTTProperties(
            responseTopic: "r", correlationData: [9], userProperties: [("a", "b"), ("a", "c")],
            messageExpiryInterval: 60, contentType: "application/json", payloadFormatIndicator: 1)
        #expect(properties == built)
        #expect(!properties.isEmpty)
        var other = built
        other.userProperties = [("a", "c"), ("a", "b")]
        #expect(other != built)
    }

    @Test func clearingEveryFieldMakesThePropertiesEmptyAgain() {
        var properties = MQTTProperties(contentType: "text/plain", payloadFormatIndicator: 1)
        properties.contentType = nil
        #expect(!properties.isEmpty)
        properties.payloadFormatIndicator = nil
        #expect(properties.isEmpty)
        #expect(properties == .empty)
        #expect(MQTTProperties(responseTopic: nil).isEmpty)
        #expect(MQTTMessage(topic: "t", payload: []).properties.isEmpty)
    }
}
