import BridgeCore
import Logging
import MQTTCore
import Metrics
import Polling
import Synchronization

/// The bridge's ordered queue of messages to publish (availability, adverts, results, events, StartNotify values).
///
/// Nobody waits for the broker: senders (the bridge actor, the D-Bus connection's value relay) append here, and the
/// queue is flushed on the MQTT client's own loop with `publishOnLoop`, everything queued at once, so a burst
/// costs one hand-off and no task or actor hop. When the client has no capacity (QoS 1 publishes at their bound,
/// or a full output buffer) the rest waits here until the client reports capacity again. Bounded: beyond `limit`
/// queued messages new ones are dropped and counted (`gattway.central.outbox.dropped`), so a broker that is away
/// for long cannot grow memory without bound; QoS 0 messages published while the broker is away are lost and
/// counted too.
final class Outbox: Sendable {
    private struct State {
        /// An array, not a deque: a flush swaps it for the spare one instead of copying it out (a message put back
        /// at the front, when the client had no room for it, is the rare case).
        var queue: [MQTTMessage] = []
        /// The emptied array of the last flush, kept so that queueing and flushing allocate nothing.
        var spare: [MQTTMessage] = []
        /// A flush is queued on the MQTT client's loop, or waits there for capacity.
        var flushing = false
        var finished = false
        /// Waiting in `drain` for the queue to be handed over; fired when a flush leaves it empty.
        var drained: [DeviceWaiterSignal] = []
    }

    private let state = Mutex(State())
    private let mqtt: any MQTTClient
    private let logger: Logger
    private let limit: Int
    private let clock: BridgeClock
    private let droppedCounter = Counter(label: "gattway.central.outbox.dropped")

    init(mqtt: any MQTTClient, logger: Logger, clock: BridgeClock, limit: Int = 10_000) {
        self.clock = clock
        self.mqtt = mqtt
        self.logger = logger
        self.limit = limit
    }

    /// What `send` does once the message is accounted for.
    private enum SendStep {
        case nothing
        case publishInPlace
        case flushOnLoop
    }

    /// Queues `message`; callable from any thread.
    func send(_ message: MQTTMessage) {
        let inLoop = mqtt.publishLoop.inLoop
        let step = state.withLock { state -> SendStep in
            guard !state.finished, state.queue.count < limit else {
                droppedCounter.increment()
                return .nothing
            }
            guard !state.flushing else {
                state.queue.append(message)
                return .nothing
            }
            // Nothing waits and no flush is under way (the queue holds messages only while `flushing` is set), so
            // publishing it now keeps the order. On the client's loop (the D-Bus connection shares it:
            // advertisements, values) it goes to the client straight away, not through the queue: one lock a
            // message instead of four, no arrays swapped. A message another thread sends meanwhile is concurrent
            // with this one, and either may go first.
            if inLoop { return .publishInPlace }
            state.flushing = true
            state.queue.append(message)
            return .flushOnLoop
        }
        switch step {
        case .nothing: return
        case .publishInPlace: publishInPlace(message)
        case .flushOnLoop: mqtt.publishLoop.execute { self.flush() }
        }
    }

    /// Runs on the MQTT client's loop: offers `message` to the client. Without capacity the message waits first in
    /// line, ahead of what other threads queued meanwhile, and the client calls back when it has capacity (a flush
    /// those threads queued finds none either, and waits for the same call).
    private func publishInPlace(_ message: MQTTMessage) {
        let result = mqtt.publishOnLoop(message) { [self] in self.flush() }
        if result.failed > 0 {
            droppedCounter.increment(by: result.failed)
            logger.debug("mqtt.publish.failed", metadata: ["count": "\(result.failed)"])
        }
        guard result.taken == 0 else { return }
        state.withLock { state in
            state.queue.insert(message, at: 0)
            state.flushing = true
        }
    }

    /// Runs on the MQTT client's loop: offers everything queued to the client, in order, until the queue is empty
    /// or the client has no capacity (then the client calls back here when it has).
    private func flush() {
        while true {
            var batch: [MQTTMessage] = state.withLock { state in
                guard !state.queue.isEmpty else {
                    state.flushing = false
                    for waiter in state.drained { waiter.fire() }
                    state.drained.removeAll()
                    return []
                }
                var batch: [MQTTMessage] = []
                swap(&batch, &state.queue)
                swap(&state.queue, &state.spare)
                return batch
            }
            guard !batch.isEmpty else { return }
            let result = mqtt.publishOnLoop(batch[...]) { [self] in self.flush() }
            if result.failed > 0 {
                droppedCounter.increment(by: result.failed)
                logger.debug("mqtt.publish.failed", metadata: ["count": "\(result.failed)"])
            }
            let taken = result.taken
            let allTaken = taken == batch.count
            state.withLock { state in
                if !allTaken { state.queue.insert(contentsOf: batch[taken...], at: 0) }
                batch.removeAll(keepingCapacity: true)
                swap(&batch, &state.spare)
            }
            if !allTaken { return }
        }
    }

    /// Waits until everything sent so far has been handed to the client, at most `timeout` (the client may have
    /// no capacity for long: a broker that is away).
    func drain(timeout: Duration) async {
        let signal = DeviceWaiterSignal()
        let empty = state.withLock { state in
            guard !state.queue.isEmpty || state.flushing else { return true }
            state.drained.append(signal)
            return false
        }
        if empty { return }
        await withTaskGroup(of: Void.self) { group in
            group.addTask { try? await signal.wait() }  // cancelled by the deadline below
            group.addTask { try? await self.clock.sleep(for: timeout) }  // the deadline; cancelled once drained
            await group.next()
            group.cancelAll()
        }
    }

    /// Refuses (and counts) whatever is sent from now on; what is queued is still published.
    func finish() {
        state.withLock { $0.finished = true }
    }
}
