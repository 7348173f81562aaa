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
        loopIsolated { client in client.publishAvailable(messages, onCapacity: onCapacity) }
    }

    private func publishAvailable(
        _ messages: ArraySlice<MQTTMessage>, onCapacity: @escaping @Sendable () -> Void
    ) -> QueuePublishResult {
        var result = QueuePublishResult(taken: 0, failed: 0)
        // libmosquitto writes each publish at once and TCP_NODELAY is on: cork the socket around a burst so that
        // it leaves as full segments instead of one segment per message.
        let corked = messages.count > 1 ? cork(true) : false
        defer { if corked { _ = cork(false) } }
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

    /// Sets TCP_CORK on the broker socket; false when there is no connected socket (or it is not TCP).
    private func cork(_ on: Bool) -> Bool {
        guard let handle = handle?.pointer, state == .connected else { return false }
        let fd = mosquitto_socket(handle)
        guard fd >= 0 else { return false }
        var value: Int32 = on ? 1 : 0
        return setsockopt(fd, Int32(IPPROTO_TCP), TCP_CORK, &value, socklen_t(MemoryLayout<Int32>.size)) == 0
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
