import Logging
import MQTTCore
import Mosquitto
import Synchronization

/// The bridge's ordered queue of messages to publish (availability, adverts, results, events, StartNotify values).
///
/// The actor never waits for the broker: it hands messages here and one consumer publishes them in order.
/// Bounded: beyond `limit` queued messages new ones are dropped and counted (`dropped`), so a broker that is away
/// for long cannot grow memory without bound.
final class Outbox: Sendable {
    private let stream: AsyncStream<MQTTMessage>
    private let continuation: AsyncStream<MQTTMessage>.Continuation
    private let counters = Mutex((queued: 0, published: 0, dropped: 0))

    init(limit: Int = 10_000) {
        (stream, continuation) = AsyncStream.makeStream(of: MQTTMessage.self, bufferingPolicy: .bufferingOldest(limit))
    }

    func send(_ message: MQTTMessage) {
        switch continuation.yield(message) {
        case .enqueued: counters.withLock { $0.queued += 1 }
        case .dropped: counters.withLock { $0.dropped += 1 }
        case .terminated: counters.withLock { $0.dropped += 1 }
        @unknown default: break
        }
    }

    var dropped: Int { counters.withLock { $0.dropped } }

    /// Publishes everything sent, in order, until `finish()`.
    func run(publishingWith mqtt: MosquittoClient, logger: Logger) async {
        for await message in stream {
            do {
                try await mqtt.publish(message)
            } catch {
                // QoS 0 while the broker is away: the message is lost; counted as dropped.
                counters.withLock { $0.dropped += 1 }
                logger.debug("mqtt.publish.failed", metadata: ["mqtt.topic": "\(message.topic)", "error": "\(error)"])
            }
            counters.withLock { $0.published += 1 }
        }
    }

    /// Waits until everything sent so far has been handed to the client, at most `timeout`.
    func drain(timeout: Duration) async {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            let (queued, published) = counters.withLock { ($0.queued, $0.published) }
            if published >= queued { return }
            try? await Task.sleep(for: .milliseconds(10))
        }
    }

    func finish() { continuation.finish() }
}
