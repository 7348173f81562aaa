import MQTTCore
import Mosquitto
import Polling
import TestWorld
import Testing

/// Publishes made in one turn of the client's loop leave together: the broker socket is corked from the turn's third
/// publish to its end, and uncorked after it, against a real mosquitto.
@Suite(.serialized, .timeLimit(.minutes(2))) struct CoalescingTests {
    /// Publishes `messages` with `publishOnLoop` in one turn of `client`'s loop.
    private func publishInOneTurn(_ client: MosquittoClient, _ messages: [MQTTMessage]) async -> MQTTQueuePublishResult
    {
        await withCheckedContinuation { continuation in
            client.publishLoop.execute {
                continuation.resume(returning: client.publishOnLoop(messages[...]) {})
            }
        }
    }

    @Test func aTurnsPublishesLeaveTogetherInOrderAndTheSocketIsUncorkedAfterIt() async throws {
        let broker = try await MosquittoBroker()
        let publisher = try MosquittoClient(options: try clientOptions(broker, "corked"), logger: testLogger("corked"))
        let subscriber = try MosquittoClient(
            options: try clientOptions(broker, "corked-sub"), logger: testLogger("corked-sub"))
        try await withRunningClients([publisher, subscriber]) {
            try await subscriber.subscribe("coalesced/#", qos: .atMostOnce)
            async let received: [Int] = withDeadline(.seconds(20), "53 messages") {
                var numbers: [Int] = []
                for await message in subscriber.messages {
                    numbers.append(sequenceNumber(message.payload))
                    if numbers.count == 53 { break }
                }
                return numbers
            }
            let before = await publisher.currentStatistics.coalescedTurns

            let pair = (0...1).map { MQTTMessage(topic: "coalesced/a", payload: sequencePayload($0)) }
            #expect(await publishInOneTurn(publisher, pair) == MQTTQueuePublishResult(taken: 2, failed: 0))
            #expect(await publisher.currentStatistics.coalescedTurns == before, "two publishes are sent as they come")

            let batch = (2...51).map { MQTTMessage(topic: "coalesced/b", payload: sequencePayload($0)) }
            #expect(await publishInOneTurn(publisher, batch) == MQTTQueuePublishResult(taken: 50, failed: 0))
            #expect(await publisher.currentStatistics.coalescedTurns == before + 1)
            #expect(await publisher.isSocketCorked == false, "the turn's end uncorks the socket")

            // Alone in its turn again: sent as it is.
            try await publisher.publish(MQTTMessage(topic: "coalesced/c", payload: sequencePayload(52)))
            #expect(try await received == Array(0...52))
            #expect(await publisher.currentStatistics.coalescedTurns == before + 1)
        }
        await broker.stop()
    }
}
