import DequeModule
import Logging
import MQTTCore
import Mosquitto
import Synchronization

/// The bridge's ordered queue of messages to publish (availability, adverts, results, events, StartNotify values).
///
/// The actor never waits for the broker: it hands messages here and one consumer publishes them in order, taking
/// everything queued at once so that a burst costs one hop to the MQTT client. Bounded: beyond `limit` queued
/// messages new ones are dropped and counted (`dropped`), so a broker that is away for long cannot grow memory
/// without bound.
final class Outbox: Sendable {
    private struct State {
        var queue: Deque<MQTTMessage> = []
        var waiter: CheckedContinuation<Void, Never>?
        var finished = false
        var inFlight = 0
        var dropped = 0
    }

    private let state = Mutex(State())
    private let limit: Int

    init(limit: Int = 10_000) {
        self.limit = limit
    }

    func send(_ message: MQTTMessage) {
        let waiter: CheckedContinuation<Void, Never>? = state.withLock { state in
            guard !state.finished, state.queue.count < limit else {
                state.dropped += 1
                return nil
            }
            state.queue.append(message)
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume()
    }

    var dropped: Int { state.withLock { $0.dropped } }

    /// Publishes everything sent, in order, until `finish()`.
    func run(publishingWith mqtt: MosquittoClient, logger: Logger) async {
        while let batch = await nextBatch() {
            do {
                try await mqtt.publish(contentsOf: batch)
            } catch {
                // QoS 0 while the broker is away: the messages are lost; counted as dropped.
                state.withLock { $0.dropped += batch.count }
                logger.debug("mqtt.publish.failed", metadata: ["count": "\(batch.count)", "error": "\(error)"])
            }
            state.withLock { $0.inFlight = 0 }
        }
    }

    /// Everything queued, or nil once finished and empty.
    private func nextBatch() async -> [MQTTMessage]? {
        while true {
            enum Next { case batch([MQTTMessage]), finished, wait }
            let next: Next = state.withLock { state in
                if !state.queue.isEmpty {
                    let batch = Array(state.queue)
                    state.queue.removeAll(keepingCapacity: true)
                    state.inFlight = batch.count
                    return .batch(batch)
                }
                return state.finished ? .finished : .wait
            }
            switch next {
            case .batch(let batch): return batch
            case .finished: return nil
            case .wait:
                await withCheckedContinuation { continuation in
                    let resumeNow = state.withLock { state in
                        if !state.queue.isEmpty || state.finished { return true }
                        state.waiter = continuation
                        return false
                    }
                    if resumeNow { continuation.resume() }
                }
            }
        }
    }

    /// Waits until everything sent so far has been handed to the client, at most `timeout`.
    func drain(timeout: Duration) async {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if state.withLock({ $0.queue.isEmpty && $0.inFlight == 0 }) { return }
            try? await Task.sleep(for: .milliseconds(10))
        }
    }

    func finish() {
        let waiter: CheckedContinuation<Void, Never>? = state.withLock { state in
            state.finished = true
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume()
    }
}
