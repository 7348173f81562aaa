import Testing

@testable import FleetSimulation

@Suite struct SimulatedBrokerTests {
    private typealias Broker = SimulatedBroker<Int>

    /// Moves every packet due by `time` (broker calls must come in time order, as in a simulation).
    private func drain(_ broker: Broker, until time: Int64 = .max) -> [SimulatedDelivery<Int>] {
        var deliveries: [SimulatedDelivery<Int>] = []
        while let next = broker.nextTime, next <= time {
            if let delivery = broker.step() { deliveries.append(delivery) }
        }
        return deliveries
    }

    @Test func eachClientsMessagesArriveInTheOrderItSentThem() {
        let broker = Broker(seed: 7, latency: 1...50, jitter: 0...40)
        for client in 0..<4 { broker.connect(client, will: nil, at: 0) }
        broker.subscribe("t/#", from: 0, at: 0)
        for sequence in 0..<200 {
            for publisher in 1..<4 {
                broker.publish(
                    SimulatedMessage(topic: "t/\(publisher)", payload: sequence, retain: false), from: publisher,
                    at: 100 + Int64(sequence))
            }
        }
        let received = drain(broker).filter { $0.client == 0 }
        #expect(received.count == 600)
        for publisher in 1..<4 {
            let sequence = received.filter { $0.message.topic == "t/\(publisher)" }.map { $0.message.payload! }
            #expect(sequence == Array(0..<200))
        }
        // Across publishers the order is not kept: messages sent later by one overtake earlier ones of another.
        let publishers = received.map(\.message.topic)
        let interleavings = zip(publishers, publishers.dropFirst()).filter { $0 != $1 }.count
        #expect(interleavings > 3)
        let times = received.map(\.time)
        #expect(times == times.sorted())
    }

    @Test func messagesFromDifferentClientsAreReordered() {
        let broker = Broker(seed: 3, latency: 1...80, jitter: 0...0)
        for client in 0..<10 { broker.connect(client, will: nil, at: 0) }
        broker.subscribe("x", from: 0, at: 0)
        for publisher in 1..<10 {
            broker.publish(
                SimulatedMessage(topic: "x", payload: publisher, retain: false), from: publisher,
                at: 1_000 + Int64(publisher))
        }
        let order = drain(broker).map { $0.message.payload! }
        #expect(Set(order) == Set(1..<10))
        #expect(order != Array(1..<10))
    }

    @Test func retainedMessagesComeWithTheSubscriptionAndAnEmptyOneClearsThem() {
        let broker = Broker(seed: 1)
        broker.connect(1, will: nil, at: 0)
        broker.publish(SimulatedMessage(topic: "a/owner/lock", payload: 5, retain: true), from: 1, at: 0)
        broker.publish(SimulatedMessage(topic: "a/owner/strap", payload: 6, retain: true), from: 1, at: 0)
        _ = drain(broker)
        broker.connect(2, will: nil, at: 1_000)
        broker.subscribe("a/owner/lock", from: 2, at: 1_000)
        broker.subscribe("a/+/strap", from: 2, at: 1_000)
        let first = drain(broker)
        #expect(first.map(\.message.payload) == [5, 6])
        #expect(first.allSatisfy { $0.message.retain })
        broker.publish(SimulatedMessage(topic: "a/owner/lock", payload: nil, retain: true), from: 1, at: 2_000)
        _ = drain(broker)
        #expect(broker.retainedValue(of: "a/owner/lock") == nil)
        broker.connect(3, will: nil, at: 3_000)
        broker.subscribe("a/owner/lock", from: 3, at: 3_000)
        #expect(drain(broker).isEmpty)
    }

    @Test func theLastWillIsPublishedOnlyWhenAClientDiesAndWithinOneAndAHalfKeepalives() {
        let broker = Broker(seed: 9, keepalive: 5_000)
        let will = SimulatedMessage(topic: "b/g1/state", payload: 0, retain: true)
        broker.connect(1, will: will, at: 0)
        broker.connect(2, will: SimulatedMessage(topic: "b/g2/state", payload: 0, retain: true), at: 0)
        broker.connect(3, will: nil, at: 0)
        broker.subscribe("b/+/state", from: 3, at: 0)
        _ = drain(broker)
        broker.kill(1, at: 10_000)
        let deliveries = drain(broker)
        #expect(deliveries.map(\.message.topic) == ["b/g1/state"])
        let willAt = deliveries[0].time
        #expect(willAt >= 15_000 && willAt <= 17_500 + 200)
        #expect(broker.retainedValue(of: "b/g1/state") == 0)
        #expect(broker.retainedValue(of: "b/g2/state") == nil)
    }

    @Test func aPartitionLosesWhatIsInFlightBothWaysAndAReconnectCancelsThePendingWill() {
        let broker = Broker(seed: 4, latency: 30...30, jitter: 0...0, keepalive: 5_000)
        broker.connect(1, will: SimulatedMessage(topic: "s/1", payload: 0, retain: true), at: 0)
        broker.connect(2, will: nil, at: 0)
        broker.subscribe("m", from: 1, at: 0)
        broker.subscribe("s/1", from: 2, at: 0)
        _ = drain(broker)
        broker.publish(SimulatedMessage(topic: "m", payload: 1, retain: false), from: 2, at: 1_000)
        broker.publish(SimulatedMessage(topic: "m", payload: 2, retain: false), from: 1, at: 1_000)
        // Cut before either packet arrives.
        broker.partition(1, at: 1_010)
        var deliveries = drain(broker, until: 2_000)
        broker.connect(1, will: SimulatedMessage(topic: "s/1", payload: 0, retain: true), at: 2_000)
        deliveries += drain(broker)
        // Client 2's message reached the broker but not the cut client; client 1's never reached the broker.
        #expect(deliveries.isEmpty)
        #expect(broker.statistics.lost == 2)
        #expect(broker.retainedValue(of: "s/1") == nil)
    }

    @Test func theSameSeedGivesTheSameRun() {
        func trace(_ seed: UInt64) -> [Int64] {
            let broker = Broker(seed: seed)
            for client in 0..<5 {
                broker.connect(client, will: nil, at: 0)
                broker.subscribe("#", from: client, at: 0)
            }
            for step in 0..<50 {
                broker.publish(
                    SimulatedMessage(topic: "t", payload: step, retain: false), from: step % 5, at: Int64(step))
            }
            return drain(broker).map { $0.time * 100 + Int64($0.client) }
        }
        #expect(trace(11) == trace(11))
        #expect(trace(11) != trace(12))
    }

    @Test func topicFiltersMatchLikeMQTT() {
        #expect(Broker.matches("a/+/state", "a/g1/state"))
        #expect(!Broker.matches("a/+/state", "a/g1/x/state"))
        #expect(Broker.matches("a/#", "a"))
        #expect(Broker.matches("a/#", "a/b/c"))
        #expect(!Broker.matches("a/b", "a/b/c"))
    }
}
