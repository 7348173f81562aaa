import MQTTCore
import Mosquitto
import Polling
import Synchronization
import TestWorld
import Testing

@Suite(.serialized, .timeLimit(.minutes(5))) struct InboundTapTests {
    /// The tap sees every message first, in order, on the client's loop; what it takes never reaches `messages`,
    /// what it leaves does, in order.
    @Test func theTapSeesEveryMessageOnTheLoopAndLeavesTheRestToTheStream() async throws {
        let broker = try await MosquittoBroker()
        let publisher = try MosquittoClient(
            options: try clientOptions(broker, "tap-publisher"), logger: testLogger("publisher"))
        let subscriber = try MosquittoClient(
            options: try clientOptions(broker, "tap-subscriber"), logger: testLogger("subscriber"))
        let seen = Mutex<[Int]>([])
        let loop = subscriber.loop
        subscriber.tapInbound { message in
            let number = sequenceNumber(message.payload)
            seen.withLock { $0.append(loop.inLoop ? number : -1) }
            return number % 2 == 0  // even numbers are taken by the tap
        }
        let count = 200
        try await withRunningClients([publisher, subscriber]) {
            try await subscriber.subscribe("tap/values", qos: .atLeastOnce)
            async let streamed: [Int] = withDeadline(.seconds(30), "the odd messages") {
                var numbers: [Int] = []
                for await message in subscriber.messages {
                    numbers.append(sequenceNumber(message.payload))
                    if numbers.count == count / 2 { break }
                }
                return numbers
            }
            let messages = (0..<count).map {
                MQTTMessage(topic: "tap/values", payload: sequencePayload($0), qos: .atLeastOnce)
            }
            try await publisher.publish(contentsOf: messages)
            #expect(try await streamed == Array(stride(from: 1, to: count, by: 2)))
            #expect(seen.withLock { $0 } == Array(0..<count))
            #expect(await subscriber.currentStatistics.messagesReceived == count)
        }
        await broker.stop()
    }
}
