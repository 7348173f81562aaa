import BluetoothCore
import BridgeCore
import BridgeTesting
import Foundation
import Logging
import MQTTCore
import Polling
import Synchronization
import Testing

@testable import CentralBridge

/// The AcquireNotify path's publisher against a client whose capacity the test sets, as a real client's output
/// buffer fills and drains: what finds no room waits in order and pauses the channel, which resumes once all of it
/// was taken.
@Suite("Notification publisher", .timeLimit(.minutes(2)))
struct NotificationPublisherTests {
    final class Channel: BLENotificationChannel {
        let resumes = Mutex(0)
        var isClosed: Bool { false }
        func resume() { resumes.withLock { $0 += 1 } }
        func close() {}
    }

    @Test func valuesWithoutRoomWaitInOrderAndTheChannelResumesOnceAllWereTaken() async throws {
        let broker = InMemoryMQTTBroker()
        let client = broker.makeClient(id: "bridge")
        let logger = Logger(label: "gattway.tests.publisher")
        let directory = NSTemporaryDirectory() + "gattway-publisher-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let publisher = NotificationPublisher(
            route: ValueRelayTests.route("gw/n"), mqtt: client,
            store: CentralStateStore(directory: directory, logger: logger), metrics: CentralMetrics())
        let channel = Channel()
        publisher.attach(channel)
        client.limitCapacity(to: 3)

        // Each batch is handed over on the client's loop, as the socket's reader does.
        func handle(_ values: UInt8...) async -> Bool {
            await withCheckedContinuation { continuation in
                client.publishLoop.execute { continuation.resume(returning: publisher.handle(values.map { [$0] })) }
            }
        }
        // Whatever the loop was asked to run before this has run.
        func settle() async {
            await withCheckedContinuation { continuation in client.publishLoop.execute { continuation.resume() } }
        }
        func published() -> [String] {
            broker.published(on: "gw/n").map { String(decoding: $0.payload, as: UTF8.self) }
        }

        #expect(await handle(1, 2))
        #expect(await handle(3, 4, 5) == false, "two values found no room: the channel pauses")
        #expect(published() == ["01", "02", "03"])

        client.grantCapacity(1)
        await settle()
        #expect(published() == ["01", "02", "03", "04"])
        #expect(channel.resumes.withLock { $0 } == 0, "one value still waits: the channel stays paused")

        client.grantCapacity(10)
        await settle()
        #expect(published() == ["01", "02", "03", "04", "05"])
        #expect(channel.resumes.withLock { $0 } == 1)

        // After the wait, batches are published at once again, in order.
        #expect(await handle(6))
        #expect(await handle(7, 8))
        #expect(published() == ["01", "02", "03", "04", "05", "06", "07", "08"])
        #expect(channel.resumes.withLock { $0 } == 1)
    }
}
