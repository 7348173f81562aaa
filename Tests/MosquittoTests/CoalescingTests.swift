import MQTTCore
import Mosquitto
import Polling
import TestWorld
import Testing

/// Publishes made in one turn of the client's loop leave together: the broker socket is corked from the turn's second
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
            async let received: [Int] = withDeadline(.seconds(20), "52 messages") {
                var numbers: [Int] = []
                for await message in subscriber.messages {
                    numbers.append(sequenceNumber(message.payload))
                    if numbers.count == 52 { break }
                }
                return numbers
            }
            let before = await publisher.currentStatistics.coalescedTurns

            let lone = await publishInOneTurn(
                publisher, [MQTTMessage(topic: "coalesced/a", payload: sequencePayload(0))])
            #expect(lone == MQTTQueuePublishResult(taken: 1, failed: 0))
            #expect(await publisher.currentStatistics.coalescedTurns == before, "one publish has nothing to coalesce")

            let batch = (1...50).map { MQTTMessage(topic: "coalesced/b", payload: sequencePayload($0)) }
            #expect(await publishInOneTurn(publisher, batch) == MQTTQueuePublishResult(taken: 50, failed: 0))
            #expect(await publisher.currentStatistics.coalescedTurns == before + 1)
            #expect(await publisher.isSocketCorked == false, "the turn's end uncorks the socket")

            // Alone in its turn again: sent as it is.
            try await publisher.publish(MQTTMessage(topic: "coalesced/c", payload: sequencePayload(51)))
            #expect(try await received == Array(0...51))
            #expect(await publisher.currentStatistics.coalescedTurns == before + 1)
        }
        await broker.stop()
    }
}
