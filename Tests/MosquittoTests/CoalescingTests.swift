import MQTTCore
import Mosquitto
import Polling
import TestWorld
import Testing

/// Publishes made in one turn of the client's loop leave together, against a real mosquitto. Plain QoS 0 packets
/// (printable ASCII topics, no properties) are written by the client itself, a turn's worth in one write; what
/// libmosquitto writes (here: topics with a non-ASCII character) goes with the socket corked from the turn's third
/// publish (its first when the loop expects a burst) to its end, and uncorked after it.
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

    @Test func aTurnsLibmosquittoPublishesLeaveTogetherInOrderAndTheSocketIsUncorkedAfterIt() async throws {
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

            let pair = (0...1).map { MQTTMessage(topic: "coalesced/\u{E9}/a", payload: sequencePayload($0)) }
            let sentPair = await publishInOneTurn(publisher, pair)
            #expect(sentPair.result == MQTTQueuePublishResult(taken: 2, failed: 0))
            #expect(sentPair.corkedAfterFirst == false)
            #expect(await publisher.currentStatistics.coalescedTurns == before, "two publishes are sent as they come")

            let batch = (2...51).map { MQTTMessage(topic: "coalesced/\u{E9}/b", payload: sequencePayload($0)) }
            let sentBatch = await publishInOneTurn(publisher, batch)
            #expect(sentBatch.result == MQTTQueuePublishResult(taken: 50, failed: 0))
            #expect(sentBatch.corkedAfterFirst == false, "corking starts at the third publish")
            #expect(await publisher.currentStatistics.coalescedTurns == before + 1)
            #expect(await publisher.isSocketCorked == false, "the turn's end uncorks the socket")

            // A turn announced as a burst corks from its first publish.
            let burst = (52...53).map { MQTTMessage(topic: "coalesced/\u{E9}/c", payload: sequencePayload($0)) }
            let sentBurst = await publishInOneTurn(publisher, burst, burst: true)
            #expect(sentBurst.result == MQTTQueuePublishResult(taken: 2, failed: 0))
            #expect(sentBurst.corkedAfterFirst == true)
            #expect(await publisher.currentStatistics.coalescedTurns == before + 2)
            #expect(await publisher.isSocketCorked == false, "the burst's end uncorks the socket")

            // Alone in its turn again: sent as it is.
            try await publisher.publish(MQTTMessage(topic: "coalesced/\u{E9}/d", payload: sequencePayload(54)))
            #expect(try await received == Array(0...54))
            #expect(await publisher.currentStatistics.coalescedTurns == before + 2)
        }
        await broker.stop()
    }

    @Test func aTurnsPlainPublishesLeaveInOneWriteInOrder() async throws {
        let broker = try await MosquittoBroker()
        let publisher = try MosquittoClient(options: try clientOptions(broker, "plain"), logger: testLogger("plain"))
        let subscriber = try MosquittoClient(
            options: try clientOptions(broker, "plain-sub"), logger: testLogger("plain-sub"))
        try await withRunningClients([publisher, subscriber]) {
            try await subscriber.subscribe("plain/#", qos: .atMostOnce)
            async let received: [Int] = withDeadline(.seconds(20), "51 messages") {
                var numbers: [Int] = []
                for await message in subscriber.messages {
                    numbers.append(sequenceNumber(message.payload))
                    if numbers.count == 51 { break }
                }
                return numbers
            }
            let before = await publisher.currentStatistics

            let batch = (0...49).map { MQTTMessage(topic: "plain/\($0 % 2)", payload: sequencePayload($0)) }
            let sent = await publishInOneTurn(publisher, batch)
            #expect(sent.result == MQTTQueuePublishResult(taken: 50, failed: 0))
            // The turn ends after the continuation resumes; an awaited publish runs in a later turn.
            try await publisher.publish(MQTTMessage(topic: "plain/last", payload: sequencePayload(50)))
            #expect(try await received == Array(0...50))
            let after = await publisher.currentStatistics
            #expect(after.directPublishes - before.directPublishes == 51)
            #expect(after.directWrites - before.directWrites == 2, "one write for the turn, one for the last")
            #expect(after.coalescedTurns == before.coalescedTurns, "nothing was left for libmosquitto to write")
        }
        await broker.stop()
    }

    /// A publish libmosquitto writes (a non-ASCII topic, MQTT 5 properties) keeps its place among plain ones in the
    /// same turn: the plain ones before it leave first, and those after it wait behind it in libmosquitto.
    @Test func publishesLibmosquittoWritesKeepTheirPlaceAmongPlainOnes() async throws {
        let broker = try await MosquittoBroker()
        let publisher = try MosquittoClient(options: try clientOptions(broker, "mixed"), logger: testLogger("mixed"))
        let subscriber = try MosquittoClient(
            options: try clientOptions(broker, "mixed-sub"), logger: testLogger("mixed-sub"))
        try await withRunningClients([publisher, subscriber]) {
            try await subscriber.subscribe("mixed/#", qos: .atMostOnce)
            async let received: [(Int, String)] = withDeadline(.seconds(20), "8 messages") {
                var messages: [(Int, String)] = []
                for await message in subscriber.messages {
                    messages.append((sequenceNumber(message.payload), message.topic))
                    if messages.count == 8 { break }
                }
                return messages
            }
            var withProperties = MQTTMessage(topic: "mixed/properties", payload: sequencePayload(3))
            withProperties.properties.contentType = "application/octet-stream"
            let batch = [
                MQTTMessage(topic: "mixed/plain", payload: sequencePayload(0)),
                MQTTMessage(topic: "mixed/plain", payload: sequencePayload(1)),
                MQTTMessage(topic: "mixed/\u{E9}t\u{E9}", payload: sequencePayload(2)),
                withProperties,
                MQTTMessage(topic: "mixed/plain", payload: sequencePayload(4)),
                MQTTMessage(topic: "mixed/plain", payload: sequencePayload(5), retain: true),
            ]
            let before = await publisher.currentStatistics.directPublishes
            let sent = await publishInOneTurn(publisher, batch)
            #expect(sent.result == MQTTQueuePublishResult(taken: 6, failed: 0))
            try await publisher.publish(MQTTMessage(topic: "mixed/plain", payload: sequencePayload(6)))
            try await publisher.publish(MQTTMessage(topic: "mixed/\u{E9}t\u{E9}", payload: sequencePayload(7)))
            let messages = try await received
            #expect(messages.map(\.0) == Array(0...7))
            #expect(messages[2].1 == "mixed/\u{E9}t\u{E9}")
            #expect(await publisher.currentStatistics.directPublishes - before == 3, "0, 1 and 6")
        }
        await broker.stop()
    }

    /// The retain flag and an empty payload, written by the client itself, reach a later subscriber as retained.
    @Test func aPlainRetainedPublishIsRetained() async throws {
        let broker = try await MosquittoBroker()
        let publisher = try MosquittoClient(options: try clientOptions(broker, "kept"), logger: testLogger("kept"))
        try await withRunningClients([publisher]) {
            try await publisher.publish(MQTTMessage(topic: "kept/a", payload: [7, 7], retain: true))
            try await publisher.publish(MQTTMessage(topic: "kept/b", payload: [1], retain: true))
            try await publisher.publish(MQTTMessage(topic: "kept/b", payload: [], retain: true))  // clears kept/b
            #expect(await publisher.currentStatistics.directPublishes == 3)
            let late = try MosquittoClient(options: try clientOptions(broker, "kept-late"), logger: testLogger("late"))
            try await withRunningClients([late]) {
                try await late.subscribe("kept/#", qos: .atMostOnce)
                let message = try await nextMessage(of: late)
                #expect(message.topic == "kept/a" && message.payload == [7, 7] && message.retain)
            }
        }
        await broker.stop()
    }

    /// In threaded mode libmosquitto only queues until the turn's end, and its queue has no bound: QoS 0 messages it
    /// queues in one turn count against the same 256 KiB as the client's own, so a turn's batch stops being taken
    /// there and the rest waits for room.
    @Test func qos0MessagesLibmosquittoQueuesInOneTurnAreBounded() async throws {
        let broker = try await MosquittoBroker()
        let publisher = try MosquittoClient(options: try clientOptions(broker, "bounded"), logger: testLogger("bound"))
        try await withRunningClients([publisher]) {
            let payload = [UInt8](repeating: 0x42, count: 1_024)
            let batch = (0..<400).map { _ in MQTTMessage(topic: "bounded/\u{E9}", payload: payload) }
            let sent = await publishInOneTurn(publisher, batch)
            #expect(sent.result.failed == 0)
            #expect(sent.result.taken < 400 && sent.result.taken >= 200, "\(sent.result)")
            // The turn's end wrote what was queued: there is room again.
            try await publisher.publish(MQTTMessage(topic: "bounded/\u{E9}", payload: payload))
        }
        await broker.stop()
    }
}
