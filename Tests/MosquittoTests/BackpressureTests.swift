import MQTTCore
import Mosquitto
import TestWorld
import Testing

@Suite(.serialized, .timeLimit(.minutes(5))) struct BackpressureTests {
    @Test func slowConsumerKeepsTheInboundBufferBoundedAndLosesNothing() async throws {
        let broker = try await MosquittoBroker()
        let highWater = 200
        var subscriberOptions = try clientOptions(broker, "slow")
        subscriberOptions.inboundBuffer = .init(highWater: highWater, lowWater: 50)
        subscriberOptions.receiveMaximum = 50
        let subscriber = try MosquittoClient(options: subscriberOptions, logger: testLogger("slow"))
        let publisher = try MosquittoClient(options: try clientOptions(broker, "fast"), logger: testLogger("fast"))
        let count = 100_000
        try await withRunningClients([subscriber, publisher]) {
            try await subscriber.subscribe("flood", qos: .atLeastOnce)
            async let received: (inOrder: Bool, count: Int) = withDeadline(.seconds(180), "\(count) messages") {
                var expected = 0
                var inOrder = true
                for await message in subscriber.messages {
                    if sequenceNumber(message.payload) != expected { inOrder = false }
                    expected += 1
                    // The consumer is slower than the flow: a pause every 2,000 messages lets the buffer fill.
                    if expected % 2_000 == 0 { try? await Task.sleep(for: .milliseconds(20)) }
                    if expected == count { break }
                }
                return (inOrder, expected)
            }
            let batch = 1_000
            for start in stride(from: 0, to: count, by: batch) {
                let messages = (start..<start + batch).map {
                    MQTTMessage(topic: "flood", payload: sequencePayload($0), qos: .atLeastOnce)
                }
                try await publisher.publish(contentsOf: messages)
            }
            try await publisher.waitForAcks(timeout: .seconds(60))
            let result = try await received
            #expect(result.count == count)
            #expect(result.inOrder)
            let statistics = await subscriber.currentStatistics
            #expect(statistics.messagesReceived == count)
            #expect(statistics.inboundBufferPeak <= highWater, "peak \(statistics.inboundBufferPeak)")
            #expect(statistics.readPauses > 0)
            #expect(statistics.pauseCapHits == 0)
            print(
                "slow consumer: \(statistics.readPauses) read pauses, \(statistics.timePaused) paused, peak \(statistics.inboundBufferPeak)"
            )
        }
        await broker.stop()
    }
}
