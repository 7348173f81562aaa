import Foundation
import MQTTCore
import Mosquitto
import TestWorld
import Testing

/// The client's inbound bounds against a real broker: oversize payloads are not copied, MQTT 5 Maximum Packet Size
/// keeps larger packets at the broker, and command subscriptions get neither retained messages nor own publishes.
@Suite(.serialized, .timeLimit(.minutes(5))) struct InboundLimitTests {
    static func pub(_ broker: MosquittoBroker, _ topic: String, _ payload: String, _ extra: [String] = []) async throws
    {
        try await MosquittoBroker.runTool(
            "mosquitto_pub", ["-h", "127.0.0.1", "-p", "\(broker.port)", "-q", "1", "-t", topic, "-m", payload] + extra)
    }

    @Test(arguments: [MQTTProtocolVersion.v311, .v5])
    func anOversizePayloadArrivesFlaggedWithOnlyItsFirstBytes(version: MQTTProtocolVersion) async throws {
        let broker = try await MosquittoBroker()
        var options = try clientOptions(broker, "oversize-\(version)")
        options.protocolVersion = version
        options.maximumInboundPayload = 100
        let client = try MosquittoClient(options: options, logger: testLogger("oversize"))
        let (big, small) = try await withRunningClients([client]) {
            try await client.subscribe("limits/in", qos: .atLeastOnce)
            try await Self.pub(broker, "limits/in", String(repeating: "x", count: 5000))
            let big = try await nextMessage(of: client)
            try await Self.pub(broker, "limits/in", "small")
            return (big, try await nextMessage(of: client))
        }
        #expect(big.oversizePayloadLength == 5000)
        #expect(big.payload.count == 64)
        #expect(small.oversizePayloadLength == nil && small.payloadText == "small")
        await broker.stop()
    }

    @Test func mqtt5MaximumPacketSizeKeepsLargerPacketsAtTheBroker() async throws {
        let broker = try await MosquittoBroker()
        var options = try clientOptions(broker, "max-packet")
        options.protocolVersion = .v5
        options.maximumPacketSize = 1000
        let client = try MosquittoClient(options: options, logger: testLogger("max-packet"))
        let received = try await withRunningClients([client]) {
            try await client.subscribe("limits/packet", qos: .atLeastOnce)
            try await Self.pub(broker, "limits/packet", String(repeating: "y", count: 5000))
            try await Self.pub(broker, "limits/packet", "after")
            return try await nextMessage(of: client)
        }
        // The broker dropped the large message for this client; the next one arrives first.
        #expect(received.payloadText == "after")
        await broker.stop()
    }

    @Test func commandSubscriptionsGetNoRetainedMessageAndNoOwnPublish() async throws {
        let broker = try await MosquittoBroker()
        try await Self.pub(broker, "limits/cmd", "retained-command", ["-r"])
        var options = try clientOptions(broker, "commands")
        options.protocolVersion = .v5
        let client = try MosquittoClient(options: options, logger: testLogger("commands"))
        let (first, second) = try await withRunningClients([client]) {
            try await client.subscribe("limits/cmd", qos: .atLeastOnce, options: .commands)
            try await client.publish(MQTTMessage(topic: "limits/cmd", text: "own", qos: .atLeastOnce))
            try await client.waitForAcks(timeout: .seconds(10))
            try await Self.pub(broker, "limits/cmd", "live")
            let first = try await nextMessage(of: client)
            // A plain subscription to the same retained topic still gets it: the difference is the option.
            try await client.subscribe("limits/#", qos: .atLeastOnce)
            return (first, try await nextMessage(of: client))
        }
        #expect(first.payloadText == "live" && !first.retain)
        #expect(second.payloadText == "retained-command" && second.retain)
        await broker.stop()
    }
}

/// The inbound buffer is bounded in bytes as well as in messages: a few large messages pause reads too.
@Suite(.serialized, .timeLimit(.minutes(5))) struct InboundByteBoundTests {
    @Test func largeMessagesPauseReadsAtTheByteBound() async throws {
        let broker = try await MosquittoBroker()
        var options = try clientOptions(broker, "bytes")
        options.inboundBuffer = .init(highWater: 1_000, lowWater: 100, highWaterBytes: 50_000)
        options.receiveMaximum = 20
        let subscriber = try MosquittoClient(options: options, logger: testLogger("bytes"))
        let publisher = try MosquittoClient(
            options: try clientOptions(broker, "bytes-pub"), logger: testLogger("bytes-pub"))
        let count = 200
        let statistics = try await withRunningClients([subscriber, publisher]) {
            try await subscriber.subscribe("bytes", qos: .atLeastOnce)
            let messages = (0..<count).map { index in
                MQTTMessage(
                    topic: "bytes", payload: sequencePayload(index) + [UInt8](repeating: 7, count: 2_000),
                    qos: .atLeastOnce)
            }
            try await publisher.publish(contentsOf: messages)
            // Nobody consumes yet: the client must pause at about 50 kB although far fewer than 1,000 messages wait.
            let deadline = ContinuousClock.now + .seconds(30)
            while await subscriber.currentStatistics.readPauses == 0, ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(20))
            }
            let paused = await subscriber.currentStatistics
            let numbers = try await withDeadline(.seconds(60), "\(count) messages") {
                var numbers: [Int] = []
                for await message in subscriber.messages {
                    numbers.append(sequenceNumber(message.payload))
                    if numbers.count == count { break }
                }
                return numbers
            }
            #expect(numbers == Array(0..<count))
            return paused
        }
        #expect(statistics.readPauses >= 1)
        // One read pass may add up to receiveMaximum messages past the bound.
        #expect(statistics.inboundBufferPeak <= 50_000 / 2_000 + 1 + 20, "peak \(statistics.inboundBufferPeak)")
        await broker.stop()
    }
}
