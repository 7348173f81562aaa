import Foundation
import MQTTCore
import Mosquitto
import TestWorld
import Testing

@Suite(.serialized, .timeLimit(.minutes(5))) struct PropertiesTests {
    static let properties = MQTTProperties(
        responseTopic: "gattway/reply/7", correlationData: Array("req-42".utf8),
        userProperties: [("device", "kitchen"), ("unit", "bpm"), ("device", "again")],
        messageExpiryInterval: 120, contentType: "application/json", payloadFormatIndicator: 1
    )

    @Test func publishedPropertiesAreSeenByMosquittoSub() async throws {
        let broker = try await MosquittoBroker()
        let client = try MosquittoClient(
            options: try clientOptions(broker, "props-out"), logger: testLogger("props-out"))
        // stdbuf: mosquitto_sub block-buffers stdout into a pipe, which would hide the SUBACK line.
        let sub = try ChildProcess(
            "stdbuf",
            [
                "-oL", "mosquitto_sub", "-h", "127.0.0.1", "-p", "\(broker.port)", "-V", "5", "-t", "props/out", "-C",
                "1", "-d",
                "-F", "MSG|%t|%p|%R|%D|%P|%C|%E|%F",
            ])
        try await sub.waitForLine { $0.contains("SUBACK") }
        try await withRunningClients([client]) {
            try await client.publish(
                MQTTMessage(topic: "props/out", text: "{\"bpm\":61}", qos: .atLeastOnce, properties: Self.properties))
            try await client.waitForAcks(timeout: .seconds(10))
        }
        let line = try await sub.waitForLine { $0.hasPrefix("MSG|") }
        let fields = line.split(separator: "|", omittingEmptySubsequences: false).map(String.init)
        #expect(fields[1] == "props/out")
        #expect(fields[2] == "{\"bpm\":61}")
        #expect(fields[3] == "gattway/reply/7")
        #expect(fields[4] == "req-42")
        #expect(
            fields[5].contains("device:kitchen") && fields[5].contains("unit:bpm") && fields[5].contains("device:again")
        )
        #expect(fields[6] == "application/json")
        // The broker counts the expiry down while the message is held, so it may arrive slightly lower.
        #expect((115...120).contains(Int(fields[7]) ?? -1), "expiry \(fields[7])")
        #expect(fields[8] == "1")
        await sub.stop()
        await broker.stop()
    }

    @Test func propertiesFromMosquittoPubAreReceived() async throws {
        let broker = try await MosquittoBroker()
        let client = try MosquittoClient(options: try clientOptions(broker, "props-in"), logger: testLogger("props-in"))
        let received = try await withRunningClients([client]) {
            try await client.subscribe("props/in", qos: .atLeastOnce)
            try await MosquittoBroker.runTool(
                "mosquitto_pub",
                [
                    "-h", "127.0.0.1", "-p", "\(broker.port)", "-V", "5", "-q", "1", "-t", "props/in", "-m", "hello",
                    "-D", "publish", "response-topic", "answer/here",
                    "-D", "publish", "correlation-data", "abc123",
                    "-D", "publish", "user-property", "first", "1",
                    "-D", "publish", "user-property", "second", "2",
                    "-D", "publish", "content-type", "text/plain",
                    "-D", "publish", "message-expiry-interval", "300",
                    "-D", "publish", "payload-format-indicator", "1",
                ])
            return try await nextMessage(of: client)
        }
        let message = received
        #expect(message.topic == "props/in")
        #expect(message.payloadText == "hello")
        #expect(message.qos == .atLeastOnce)
        #expect(message.properties.responseTopic == "answer/here")
        #expect(message.properties.correlationData == Array("abc123".utf8))
        #expect(message.properties.userProperties.map { "\($0.0)=\($0.1)" } == ["first=1", "second=2"])
        #expect(message.properties.contentType == "text/plain")
        #expect((295...300).contains(message.properties.messageExpiryInterval ?? 0))
        #expect(message.properties.payloadFormatIndicator == 1)
        await broker.stop()
    }

    @Test func version311ClientsExchangeMessagesWithoutProperties() async throws {
        let broker = try await MosquittoBroker()
        var options = try clientOptions(broker, "v311")
        options.protocolVersion = .v311
        let client = try MosquittoClient(options: options, logger: testLogger("v311"))
        let received = try await withRunningClients([client]) {
            try await client.subscribe("old/#", qos: .atLeastOnce)
            try await client.publish(
                MQTTMessage(topic: "old/x", text: "v3", qos: .atLeastOnce, properties: Self.properties))
            return try await nextMessage(of: client)
        }
        #expect(received.payloadText == "v3")
        #expect(received.properties.isEmpty)
        await broker.stop()
    }
}
