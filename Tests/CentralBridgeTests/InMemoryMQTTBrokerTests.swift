import BridgeTesting
import Dispatch
import MQTTCore
import Polling
import Testing

/// The in-memory broker behaves as the bridges' tests rely on: the semantics below are those of mosquitto.
@Suite(.timeLimit(.minutes(1)))
struct InMemoryMQTTBrokerTests {
    @Test func deliversByTopicFilterInPublishOrderWhateverTheQoS() async throws {
        let broker = InMemoryMQTTBroker()
        let publisher = broker.makeClient(id: "publisher")
        let subscriber = broker.makeClient(id: "subscriber")
        try await subscriber.subscribe("home/+/temperature", qos: .atLeastOnce, options: .plain)
        try await publisher.publish(MQTTMessage(topic: "home/kitchen/temperature", text: "1", qos: .atLeastOnce))
        try await publisher.publish(MQTTMessage(topic: "home/kitchen/humidity", text: "x"))
        try await publisher.publish(MQTTMessage(topic: "home/hall/temperature", text: "2", qos: .atMostOnce))
        subscriber.stop()
        var received: [String] = []
        for await message in subscriber.messages { received.append("\(message.topic)=\(message.payloadText)") }
        #expect(received == ["home/kitchen/temperature=1", "home/hall/temperature=2"])
    }

    @Test func retainedMessageIsSentOnSubscribeUnlessRetainHandlingSaysNever() async throws {
        let broker = InMemoryMQTTBroker()
        let publisher = broker.makeClient(id: "publisher")
        try await publisher.publish(MQTTMessage(topic: "a/state", text: "on", qos: .atLeastOnce, retain: true))
        let plain = broker.makeClient(id: "plain")
        let commands = broker.makeClient(id: "commands")
        try await plain.subscribe("a/#", qos: .atLeastOnce, options: .plain)
        try await commands.subscribe("a/#", qos: .atLeastOnce, options: .commands)
        plain.stop()
        commands.stop()
        let toPlain = await collected(plain.messages)
        let toCommands = await collected(commands.messages)
        #expect(toPlain.map(\.payloadText) == ["on"] && toPlain.first?.retain == true)
        #expect(toCommands.isEmpty)
        try await publisher.publish(MQTTMessage(topic: "a/state", payload: [], qos: .atLeastOnce, retain: true))
        #expect(broker.retainedMessages["a/state"] == nil)
    }

    @Test func noLocalSubscriptionDoesNotReceiveOwnPublishes() async throws {
        let broker = InMemoryMQTTBroker()
        let client = broker.makeClient(id: "bridge")
        let other = broker.makeClient(id: "other")
        try await client.subscribe("x/set", qos: .atLeastOnce, options: .commands)
        try await client.publish(MQTTMessage(topic: "x/set", text: "own"))
        try await other.publish(MQTTMessage(topic: "x/set", text: "theirs"))
        client.stop()
        #expect(await collected(client.messages).map(\.payloadText) == ["theirs"])
    }

    @Test func droppedClientLeavesItsWillAndQueuesQoS1UntilReconnect() async throws {
        let broker = InMemoryMQTTBroker()
        let will = MQTTMessage(topic: "gw/bridge/state", text: "offline", qos: .atLeastOnce, retain: true)
        let client = broker.makeClient(id: "bridge", will: will)
        var events = client.connectionEvents.makeAsyncIterator()
        #expect(await events.next() == .connected)
        client.dropConnection()
        #expect(await events.next() == .disconnected(.connectionLost(reason: "dropped by the test")))
        #expect(broker.retainedMessages["gw/bridge/state"]?.payloadText == "offline")
        await #expect(throws: MQTTError.self) { try await client.publish(MQTTMessage(topic: "t", text: "qos0")) }
        try await client.publish(MQTTMessage(topic: "t", text: "qos1", qos: .atLeastOnce))
        #expect(broker.published(on: "t").isEmpty)
        client.reconnect()
        #expect(await events.next() == .connected)
        #expect(try await broker.nextPublished(on: "t").payloadText == "qos1")
    }

    @Test func synchronousPublishRunsOnThePublishLoop() async throws {
        let broker = InMemoryMQTTBroker()
        let client = broker.makeClient(id: "hot")
        let result = await withCheckedContinuation { continuation in
            client.publishLoop.execute {
                continuation.resume(
                    returning: client.publishOnLoop(
                        [MQTTMessage(topic: "v", text: "1"), MQTTMessage(topic: "v", text: "2")][...]
                    ) {})
            }
        }
        #expect(result == MQTTQueuePublishResult(taken: 2, failed: 0))
        #expect(broker.published(on: "v").map(\.payloadText) == ["1", "2"])
    }

    @Test func manualClockWakesSleepersOnlyWhenAdvancedPastTheirDeadline() async throws {
        let clock = ManualClock()
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await clock.sleep(for: .seconds(5)) }
            try await clock.waitForSleepers(count: 1)
            clock.advance(by: .seconds(4))
            #expect(clock.sleeperCount == 1)
            clock.advance(by: .seconds(1))
            try await group.next()
            #expect(clock.sleeperCount == 0)
        }
    }
}

/// Everything a finished sequence yields, in order.
private func collected<S: AsyncSequence>(_ sequence: S) async -> [S.Element] where S.Failure == Never {
    var out: [S.Element] = []
    for await element in sequence { out.append(element) }
    return out
}
