import CMosquitto
import Glibc
package import MQTTCore
package import Polling

extension MosquittoClient {
    /// What `publishOnLoop` did with a batch.
    package typealias QueuePublishResult = MQTTQueuePublishResult

    /// `loop`, as the `MQTTClient` port names it: code on it (a notification socket's watch, say) can publish with
    /// `publishOnLoop`, without the thread hand-offs of an `await` on the actor.
    package nonisolated var publishLoop: PollLoop { loop }

    /// Publishes from code already running on `loop`, without suspending: messages are taken in order while there
    /// is capacity (QoS 1/2: a free outstanding slot; QoS 0: the output buffer not full). When not all were taken,
    /// `onCapacity` runs once on `loop` as soon as capacity returns, so the caller can offer the rest then.
    ///
    /// - Precondition: called on `loop` (checked: traps elsewhere).
    package nonisolated func publishOnLoop(
        _ messages: ArraySlice<MQTTMessage>, onCapacity: @escaping @Sendable () -> Void
    ) -> QueuePublishResult {
        // A struct, not a tuple: a tuple holding a closure passes through `loopIsolated`'s generic argument only
        // behind a thunk allocated per call.
        loopIsolated(with: PublishBatch(messages: messages, onCapacity: onCapacity)) {
            $0.publishAvailable($1.messages, onCapacity: $1.onCapacity)
        }
    }

    private func publishAvailable(
        _ messages: ArraySlice<MQTTMessage>, onCapacity: @escaping @Sendable () -> Void
    ) -> QueuePublishResult {
        var result = QueuePublishResult(taken: 0, failed: 0)
        // libmosquitto writes each publish at once (TCP_NODELAY is on), and each goes out as its own segment. Corking
        // the socket around a burst measured worse: 5,000 values/s arriving in bursts cost 15–18 % more of both
        // Gattway's CPU and the broker's, for the two setsockopt calls and the extra wake-ups the release caused.
        for message in messages {
            guard hasCapacity(for: message.qos) else {
                capacityCallbacks.append(onCapacity)
                return result
            }
            do { try publishNow(message) } catch { result.failed += 1 }
            result.taken += 1
        }
        return result
    }

    private func hasCapacity(for qos: MQTTQoS) -> Bool {
        if qos > .atMostOnce { return outstanding.count < options.maxOutstandingPublishes }
        guard let handle = handle?.pointer, state == .connected else { return true }  // fails fast: notConnected
        return !mosquitto_want_write(handle)
    }

    /// Runs the callbacks of `publishOnLoop` callers waiting for capacity (after an ack, a drained socket or a
    /// lost link, where QoS 0 messages then fail fast instead of waiting).
    func capacityReturned() {
        guard !capacityCallbacks.isEmpty else { return }
        let callbacks = capacityCallbacks
        capacityCallbacks.removeAll()
        for callback in callbacks { callback() }
    }
}

/// What `publishOnLoop` hands to the actor.
private struct PublishBatch {
    let messages: ArraySlice<MQTTMessage>
    let onCapacity: @Sendable () -> Void
}
