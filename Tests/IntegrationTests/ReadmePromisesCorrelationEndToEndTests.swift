import Foundation
import TestWorld
import Testing

/// MQTT 5 request/response: a `/set` result and a bridge response also go to the request's Response Topic,
/// carrying its Correlation Data unchanged, so a requester can match answers to questions.
@Suite(.serialized, .timeLimit(.minutes(3)))
struct ReadmePromisesCorrelationEndToEndTests {
    private static func requestProperties(replyTo topic: String, correlation: String) -> [String] {
        ["-V", "5", "-D", "publish", "response-topic", topic, "-D", "publish", "correlation-data", correlation]
    }

    @Test func setResultReachesTheResponseTopicWithItsCorrelationData() async throws {
        let world = try await CentralWorld(scenario: "demo.yaml", config: Configs.strapAndLock)
        try await world.run { world in
            try await world.observer.waitForMessage(on: "gattway/lock/availability") { $0 == "online" }
            let replies = try await MQTTPropertyObserver(.init(port: world.broker.port), filters: ["client/replies/#"])
            try await replies.publish(
                "gattway/lock/control/set", "unlock",
                extra: Self.requestProperties(replyTo: "client/replies/set", correlation: "req-17"))
            try await replies.publish(
                "gattway/lock/control/set", "jam",
                extra: Self.requestProperties(replyTo: "client/replies/set", correlation: "req-18"))
            let ok = try await replies.waitForMessage(on: "client/replies/set") { $0.correlationData == "req-17" }
            #expect(ok.payload == #"{"ok":true}"#)
            let refused = try await replies.waitForMessage(on: "client/replies/set") { $0.correlationData == "req-18" }
            #expect(refused.payload.contains(#""ok":false"#))
            #expect(replies.messages(on: "client/replies/set").map(\.correlationData).sorted() == ["req-17", "req-18"])
            await replies.stop()
        }
    }

    @Test func bridgeResponseReachesTheResponseTopicWithItsCorrelationData() async throws {
        let world = try await CentralWorld(scenario: "demo.yaml", config: Configs.strapAndLock)
        try await world.run { world in
            // The lock is tracked once its advert is published: the devices list then names it.
            try await world.observer.waitForMessage(on: "gattway/lock/advert")
            let replies = try await MQTTPropertyObserver(.init(port: world.broker.port), filters: ["client/replies/#"])
            try await replies.publish(
                "gattway/bridge/request/devices", #"{"transaction":"d"}"#,
                extra: Self.requestProperties(replyTo: "client/replies/bridge", correlation: "corr-devices"))
            let devices = try await replies.waitForMessage(on: "client/replies/bridge")
            #expect(devices.correlationData == "corr-devices")
            #expect(devices.payload.contains(#""name":"lock""#) && devices.payload.contains(#""transaction":"d""#))
            try await replies.publish(
                "gattway/bridge/request/connect", #"{"device":"nobody"}"#,
                extra: Self.requestProperties(replyTo: "client/replies/bridge", correlation: "corr-connect"))
            let unknown = try await replies.waitForMessage(on: "client/replies/bridge", skipping: 1)
            #expect(unknown.correlationData == "corr-connect")
            #expect(unknown.payload.contains("UnknownDevice"))
            await replies.stop()
        }
    }
}
