import MQTTCore
import Mosquitto
import TestWorld
import Testing

@Suite(.serialized, .timeLimit(.minutes(5))) struct DeliveryTests {
    @Test func tenThousandQoS1MessagesArriveInOrderWithoutLoss() async throws {
        let broker = try await MosquittoBroker()
        let publisher = try MosquittoClient(
            options: try clientOptions(broker, "publisher"), logger: testLogger("publisher"))
        let subscriber = try MosquittoClient(
            options: try clientOptions(broker, "subscriber"), logger: testLogger("subscriber"))
        let count = 10_000
        try await withRunningClients([publisher, subscriber]) {
            try await subscriber.subscribe("bench/qos1", qos: .atLeastOnce)
            async let received: [Int] = withDeadline(.seconds(60), "\(count) messages") {
                var numbers: [Int] = []
                for await message in subscriber.messages {
                    numbers.append(sequenceNumber(message.payload))
                    if numbers.count == count { break }
                }
                return numbers
            }
            let messages = (0..<count).map {
                MQTTMessage(topic: "bench/qos1", payload: sequencePayload($0), qos: .atLeastOnce)
            }
            try await publisher.publish(contentsOf: messages)
            try await publisher.waitForAcks(timeout: .seconds(30))
            let numbers = try await received
            #expect(numbers == Array(0..<count))
            let statistics = await publisher.currentStatistics
            #expect(statistics.messagesPublished == count)
            #expect(statistics.outstandingPublishes == 0)
        }
        await broker.stop()
    }

    @Test func invalidTopicIsRefusedBeforeReachingTheBroker() async throws {
        let broker = try await MosquittoBroker()
        let client = try MosquittoClient(options: try clientOptions(broker, "invalid"), logger: testLogger("invalid"))
        try await withRunningClients([client]) {
            await #expect(throws: MQTTError.self) { try await client.publish(MQTTMessage(topic: "a/+/b", text: "x")) }
            await #expect(throws: MQTTError.self) { try await client.subscribe("a/#/b", qos: .atMostOnce) }
            // Each is refused with the rule it breaks, before and after valid topics are published again and again,
            // in turns; a NUL is refused rather than cutting the topic short at it.
            try await client.publish(MQTTMessage(topic: "a/b", text: "x"))
            try await client.publish(MQTTMessage(topic: "a/c", text: "x"))
            try await client.publish(MQTTMessage(topic: "a/b", text: "x"))
            let tooLong = String(repeating: "t", count: MQTTTopic.maximumByteCount + 1)
            for invalid in ["", "a/\0b", "#", "a/b/+", tooLong] {
                let refusal = try #require(MQTTTopic.problem(in: invalid))
                let expected = MQTTError.invalidTopic(invalid, reason: refusal.description)
                await #expect(throws: expected, "\(invalid.prefix(8))") {
                    try await client.publish(MQTTMessage(topic: invalid, text: "x"))
                }
                try await client.publish(MQTTMessage(topic: "a/b", text: "x"))
                await #expect(throws: expected, "\(invalid.prefix(8)) after a/b") {
                    try await client.publish(MQTTMessage(topic: invalid, text: "x"))
                }
                try await client.publish(MQTTMessage(topic: "a/c", text: "x"))
            }
            #expect(await client.currentStatistics.messagesPublished == 13)
        }
        await broker.stop()
    }

    @Test func qos0WhileDisconnectedFailsButQoS1IsQueuedUntilReconnect() async throws {
        let broker = try await MosquittoBroker()
        let client = try MosquittoClient(options: try clientOptions(broker, "offline"), logger: testLogger("offline"))
        let listener = try MosquittoClient(
            options: try clientOptions(broker, "offline-listener"), logger: testLogger("listener"))
        try await withRunningClients([client, listener]) {
            try await listener.subscribe("offline/#", qos: .atLeastOnce)
            await broker.stop()
            var events = client.connectionEvents.makeAsyncIterator()
            while let event = await events.next(), event == .connected {}
            await #expect(throws: MQTTError.notConnected(operation: "publishing to offline/zero")) {
                try await client.publish(MQTTMessage(topic: "offline/zero", text: "lost"))
            }
            // Retained, so it reaches the listener whichever of the two clients reconnects first.
            try await client.publish(MQTTMessage(topic: "offline/one", text: "kept", qos: .atLeastOnce, retain: true))
            #expect(await client.currentStatistics.outstandingPublishes == 1)
            try await broker.start()
            try await client.waitUntilConnected(timeout: .seconds(15))
            try await listener.waitUntilConnected(timeout: .seconds(15))
            try await client.waitForAcks(timeout: .seconds(15))
            let message = try await nextMessage(of: listener)
            #expect(message.payloadText == "kept")
        }
        await broker.stop()
    }
}
