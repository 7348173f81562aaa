import BridgeCore
import BridgeTesting
import Logging
import MQTTCore
import Polling
import Synchronization
import Testing

@testable import CentralBridge

/// The outbox against a client whose capacity the test sets: messages sent on the client's loop go to it at once,
/// those sent elsewhere are queued and flushed there, and without room everything waits in the order it was sent,
/// from either side, until the client has room again.
@Suite("Outbox", .timeLimit(.minutes(2)))
struct OutboxTests {
    let broker = InMemoryMQTTBroker()
    let client: InMemoryMQTTClient
    let outbox: Outbox

    init() {
        client = broker.makeClient(id: "bridge")
        outbox = Outbox(mqtt: client, logger: Logger(label: "gattway.tests.outbox"), clock: BridgeClock(ManualClock()))
    }

    private func message(_ text: String) -> MQTTMessage {
        MQTTMessage(topic: "gw/o", text: text, qos: .atMostOnce)
    }

    /// Sends on the client's loop, as the D-Bus connection's handlers do.
    private func sendOnLoop(_ texts: String...) async {
        await withCheckedContinuation { continuation in
            client.publishLoop.execute {
                for text in texts { outbox.send(message(text)) }
                continuation.resume()
            }
        }
    }

    /// Whatever the loop was asked to run before this has run.
    private func settle() async {
        await withCheckedContinuation { continuation in client.publishLoop.execute { continuation.resume() } }
    }

    private func published() -> [String] {
        broker.published(on: "gw/o").map { String(decoding: $0.payload, as: UTF8.self) }
    }

    @Test func messagesSentOnTheLoopArePublishedAtOnceInOrder() async {
        await sendOnLoop("1", "2", "3")
        #expect(published() == ["1", "2", "3"])
    }

    @Test func messagesSentElsewhereAreFlushedOnTheLoopInOrder() async {
        outbox.send(message("1"))
        outbox.send(message("2"))
        await settle()
        await sendOnLoop("3")
        #expect(published() == ["1", "2", "3"])
    }

    @Test func withoutRoomMessagesFromBothSidesWaitInTheOrderTheyWereSent() async {
        client.limitCapacity(to: 1)
        await sendOnLoop("1", "2")  // the second finds no room and waits first in line
        outbox.send(message("3"))  // from another thread, behind it
        await sendOnLoop("4")  // on the loop again: a flush is under way, so it queues too
        await settle()
        #expect(published() == ["1"])

        client.grantCapacity(2)
        await settle()
        #expect(published() == ["1", "2", "3"])

        client.grantCapacity(10)
        await settle()
        #expect(published() == ["1", "2", "3", "4"])

        // Room again: straight to the client once more.
        await sendOnLoop("5")
        #expect(published() == ["1", "2", "3", "4", "5"])
    }

    @Test func drainWaitsForTheQueueToBeHandedOverAndFinishRefusesWhatFollows() async {
        client.limitCapacity(to: 0)
        await sendOnLoop("1")
        let drained = Mutex(false)
        async let draining: Void = {
            await outbox.drain(timeout: .seconds(60))
            drained.withLock { $0 = true }
        }()
        await settle()
        #expect(!drained.withLock { $0 }, "the message still waits for room")
        client.grantCapacity(10)
        await draining
        #expect(published() == ["1"])

        outbox.finish()
        await sendOnLoop("2")
        outbox.send(message("3"))
        await settle()
        #expect(published() == ["1"])
    }
}
