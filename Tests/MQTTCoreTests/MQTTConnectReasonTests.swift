import MQTTCore
import Testing

@Suite struct MQTTConnectReasonTests {
    @Test func describesVersion5ReasonCodes() {
        #expect(MQTTConnectReason(code: 135, protocolVersion: .v5).description == "135 Not authorized")
        #expect(MQTTConnectReason(code: 134, protocolVersion: .v5).meaning == "Bad User Name or Password")
        #expect(MQTTConnectReason(code: 0, protocolVersion: .v5).isSuccess)
        #expect(MQTTConnectReason(code: 250, protocolVersion: .v5).meaning == "Unknown reason code")
    }

    @Test func describesVersion311ReturnCodes() {
        #expect(MQTTConnectReason(code: 5, protocolVersion: .v311).meaning == "Not authorized")
        #expect(MQTTConnectReason(code: 3, protocolVersion: .v311).isRetriable)
        #expect(!MQTTConnectReason(code: 4, protocolVersion: .v311).isRetriable)
    }

    @Test func refusedConnectionErrorReadsWell() {
        let error = MQTTError.connectionRefused(MQTTConnectReason(code: 135, protocolVersion: .v5))
        #expect(error.description == "connection refused by broker: 135 Not authorized")
        #expect(!error.isRetriable)
    }

    @Test func userPropertiesKeepOrderInEquality() {
        let a = MQTTProperties(userProperties: [("a", "1"), ("b", "2")])
        let b = MQTTProperties(userProperties: [("b", "2"), ("a", "1")])
        #expect(a != b)
        #expect(a == MQTTProperties(userProperties: [("a", "1"), ("b", "2")]))
    }
}
