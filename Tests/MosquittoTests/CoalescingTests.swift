import MQTTCore
import Mosquitto
import Polling
import TestWorld
import Testing

/// Publishes made in one turn of the client's loop leave together: the broker socket is corked from the turn's third
/// publish (its first when the loop expects a burst) to its end, and uncorked after it, against a real mosquitto.
@Suite(.serialized, .timeLimit(.minutes(2))) struct CoalescingTests {
    /// Publishes `messages` with `publishOnLoop` in one turn of `client`'s loop (the first one alone, as the outbox
    /// sends a message when nothing waits, the rest as a batch), first announcing a burst when `burst`
    /// (`PollLoop.expectBurst`); also says whether the socket was corked right after the turn's first publish.
    private func publishInOneTurn(
        _ client: MosquittoClient, _ messages: [MQTTMessage], burst: Bool = false
    ) async -> (result: MQTTQueuePublishResult, corkedAfterFirst: Bool?) {
        await withCheckedContinuation { continuation in
            let loop = client.publishLoop
            loop.execute {
                if burst { loop.expectBurst() }
                var result = client.publishOnLoop(messages[0]) {}
                let corked = client.loopIsolated { $0.isSocketCorked }
                let rest = client.publishOnLoop(messages.dropFirst()) {}
                result.taken += rest.taken
                result.failed += rest.failed
                continuation.resume(returning: (result, corked))
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
            async let received: [Int] = withDeadline(.seconds(20), "55 messages") {
                var numbers: [Int] = []
                for await message in subscriber.messages {
                    numbers.append(sequenceNumber(message.payload))
                    if numbers.count == 55 { break }
                }
                return numbers
            }
            let before = await publisher.currentStatistics.coalescedTurns

            let pair = (0...1).map { MQTTMessage(topic: "coalesced/a", payload: sequencePayload($0)) }
            let sentPair = await publishInOneTurn(publisher, pair)
            #expect(sentPair.result == MQTTQueuePublishResult(taken: 2, failed: 0))
            #expect(sentPair.corkedAfterFirst == false)
            #expect(await publisher.currentStatistics.coalescedTurns == before, "two publishes are sent as they come")

            let batch = (2...51).map { MQTTMessage(topic: "coalesced/b", payload: sequencePayload($0)) }
            let sentBatch = await publishInOneTurn(publisher, batch)
            #expect(sentBatch.result == MQTTQueuePublishResult(taken: 50, failed: 0))
            #expect(sentBatch.corkedAfterFirst == false, "corking starts at the third publish")
            #expect(await publisher.currentStatistics.coalescedTurns == before + 1)
            #expect(await publisher.isSocketCorked == false, "the turn's end uncorks the socket")

            // A turn announced as a burst corks from its first publish.
            let burst = (52...53).map { MQTTMessage(topic: "coalesced/c", payload: sequencePayload($0)) }
            let sentBurst = await publishInOneTurn(publisher, burst, burst: true)
            #expect(sentBurst.result == MQTTQueuePublishResult(taken: 2, failed: 0))
            #expect(sentBurst.corkedAfterFirst == true)
            #expect(await publisher.currentStatistics.coalescedTurns == before + 2)
            #expect(await publisher.isSocketCorked == false, "the burst's end uncorks the socket")

            // Alone in its turn again: sent as it is.
            try await publisher.publish(MQTTMessage(topic: "coalesced/d", payload: sequencePayload(54)))
            #expect(try await received == Array(0...54))
            #expect(await publisher.currentStatistics.coalescedTurns == before + 2)
        }
        await broker.stop()
    }
}
