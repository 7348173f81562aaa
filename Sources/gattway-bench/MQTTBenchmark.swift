import ArgumentParser
import Foundation
import Logging
import MQTTCore
import Mosquitto
import TestWorld

/// `gattway-bench mqtt`: publish throughput of `MosquittoClient` end to end through a real broker it starts itself.
struct MQTTBenchmark: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "mqtt",
        abstract: "MQTT publish throughput, QoS 0 and QoS 1, end to end through a private mosquitto."
    )

    @Option(help: "QoS 0 messages to send.") var qos0Count = 200_000
    @Option(help: "QoS 1 messages to send.") var qos1Count = 100_000
    @Option(help: "Payload size in bytes (at least 4: the sequence number).") var payloadSize = 20
    @Option(help: "Messages handed to the client per call (publish(contentsOf:)).") var batchSize = 1_000

    func run() async throws {
        guard payloadSize >= 4 else { throw ValidationError("--payload-size must be at least 4") }
        let broker = try await MosquittoBroker()
        do {
            try await measure(port: broker.port)
        } catch {
            await broker.stop()
            throw error
        }
        await broker.stop()
    }

    /// Publishes and receives through the broker on `port`, printing the figures.
    private func measure(port: UInt16) async throws {
        var logger = Logger(label: "gattway.bench.mqtt")
        logger.logLevel = .warning
        let url = try MQTTBrokerURL(parsing: "mqtt://127.0.0.1:\(port)")
        let publisher = try MosquittoClient(options: .init(broker: url, clientID: "bench-publisher"), logger: logger)
        var receiverOptions = MosquittoClient.Options(broker: url, clientID: "bench-receiver")
        receiverOptions.inboundBuffer = .init(highWater: 10_000, lowWater: 2_500)
        receiverOptions.receiveMaximum = 1_000
        let receiver = try MosquittoClient(options: receiverOptions, logger: logger)

        print(
            "mosquitto 2.0.11 on 127.0.0.1:\(port), max_queued_messages 0; payload \(payloadSize) bytes, batches of \(batchSize)"
        )
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await publisher.run() }
            group.addTask { try await receiver.run() }
            defer { group.cancelAll() }
            try await publisher.waitUntilConnected(timeout: .seconds(10))
            try await receiver.waitUntilConnected(timeout: .seconds(10))
            for (qos, count) in [(MQTTQoS.atMostOnce, qos0Count), (.atLeastOnce, qos1Count)] where count > 0 {
                let topic = "bench/qos\(qos.rawValue)"
                try await receiver.subscribe(topic, qos: qos)
                let result = try await measure(
                    qos: qos, count: count, topic: topic, publisher: publisher, receiver: receiver)
                print(result)
                try await receiver.unsubscribe(topic)
            }
            let statistics = await receiver.currentStatistics
            print(
                "receiver: \(statistics.readPauses) read pauses (\(statistics.timePaused) paused), buffer peak \(statistics.inboundBufferPeak)"
            )
        }
    }

    private enum Outcome: Sendable {
        case sent(Duration)
        case received(count: Int, outOfOrder: Int, Duration)
    }

    private func measure(qos: MQTTQoS, count: Int, topic: String, publisher: MosquittoClient, receiver: MosquittoClient)
        async throws -> String
    {
        let padding = [UInt8](repeating: 0x2A, count: payloadSize - 4)
        let messages = (0..<count).map { index in
            MQTTMessage(
                topic: topic, payload: withUnsafeBytes(of: UInt32(index).bigEndian) { Array($0) } + padding, qos: qos)
        }
        let batchSize = self.batchSize
        let receivedBefore = await receiver.currentStatistics.messagesReceived
        let start = ContinuousClock.now
        var sendTime = Duration.zero
        var received = (count: 0, outOfOrder: 0, time: Duration.zero)
        try await withThrowingTaskGroup(of: Outcome.self) { group in
            group.addTask {
                var received = 0
                var outOfOrder = 0
                var expected = 0
                for await message in receiver.messages {
                    let number = message.payload.prefix(4).reduce(0) { $0 << 8 | Int($1) }
                    if number != expected { outOfOrder += 1 }
                    expected = number + 1
                    received += 1
                    if received == count { break }
                }
                return .received(count: received, outOfOrder: outOfOrder, ContinuousClock.now - start)
            }
            group.addTask {
                for offset in stride(from: 0, to: count, by: batchSize) {
                    try await publisher.publish(contentsOf: Array(messages[offset..<min(offset + batchSize, count)]))
                }
                if qos > .atMostOnce { try await publisher.waitForAcks(timeout: .seconds(120)) }
                return .sent(ContinuousClock.now - start)
            }
            while let outcome = try await group.next() {
                switch outcome {
                case .sent(let time):
                    sendTime = time
                    // QoS 0 may lose messages: stop receiving once nothing has arrived for two seconds.
                    var last = -1
                    while received.time == .zero {
                        let now = await receiver.currentStatistics.messagesReceived
                        if now == last {
                            group.cancelAll()
                            break
                        }
                        last = now
                        try await Task.sleep(for: .seconds(2))
                        if now - receivedBefore >= count { break }
                    }
                case .received(let n, let outOfOrder, let time):
                    received = (n, outOfOrder, time)
                }
            }
        }
        func rate(_ n: Int, _ d: Duration) -> String {
            let seconds = Double(d.components.seconds) + Double(d.components.attoseconds) / 1e18
            return seconds > 0 ? String(Int((Double(n) / seconds).rounded())) : "-"
        }
        let endToEnd = received.time == .zero ? ContinuousClock.now - start : received.time
        return
            "QoS \(qos.rawValue): \(count) sent in \(sendTime) (\(rate(count, sendTime)) msg/s\(qos > .atMostOnce ? ", all acknowledged" : "")); "
            + "\(received.count) received (\(count - received.count) lost, \(received.outOfOrder) out of order) in \(endToEnd): "
            + "\(rate(received.count, endToEnd)) msg/s end to end"
    }
}
