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

    /// `publishOnLoop` of one message, with no array around it.
    package nonisolated func publishOnLoop(
        _ message: MQTTMessage, onCapacity: @escaping @Sendable () -> Void
    ) -> QueuePublishResult {
        loopIsolated(with: PublishOne(message: message, onCapacity: onCapacity)) {
            $0.publishIfCapacity($1.message, onCapacity: $1.onCapacity)
        }
    }

    private func publishIfCapacity(
        _ message: MQTTMessage, onCapacity: @escaping @Sendable () -> Void
    ) -> QueuePublishResult {
        var result = QueuePublishResult(taken: 0, failed: 0)
        _ = offer(message, onCapacity: onCapacity, into: &result)
        return result
    }

    private func publishAvailable(
        _ messages: ArraySlice<MQTTMessage>, onCapacity: @escaping @Sendable () -> Void
    ) -> QueuePublishResult {
        var result = QueuePublishResult(taken: 0, failed: 0)
        // Plain QoS 0 packets leave in one write at the turn's end (`DirectPublishes`); what libmosquitto writes goes
        // one packet a write, with the socket corked from a turn's third such publish on (its first in a burst), so
        // that a larger turn's publishes leave together.
        for message in messages {
            guard offer(message, onCapacity: onCapacity, into: &result) else { return result }
        }
        return result
    }

    /// Publishes `message` when there is capacity for it, counting it in `result` (taken, and failed when
    /// libmosquitto refused it); without capacity keeps `onCapacity` for when it returns and answers false.
    private func offer(
        _ message: MQTTMessage, onCapacity: @escaping @Sendable () -> Void, into result: inout QueuePublishResult
    ) -> Bool {
        guard hasCapacity(for: message.qos) else {
            capacityCallbacks.append(onCapacity)
            return false
        }
        do { try publishNow(message) } catch { result.failed += 1 }
        result.taken += 1
        return true
    }

    /// From the third publish in one loop turn on, holds the socket's segments back (TCP_CORK) until the turn
    /// ends: the publishes of a batch of advertisements read in one turn then leave in one segment instead of one
    /// each, which spares the kernel's TCP path, the broker's wake-ups and ours. Corking costs two `setsockopt` calls
    /// and pays only when it saves more than one segment: a turn of one or two publishes (a value stream at its usual
    /// rates, one advertisement's state and advert) is sent as before, with no extra call. In a turn the loop was
    /// told brings a burst (`PollLoop.expectBurst`: reports gathered while reading paused), corking starts at the
    /// first publish, so the batch's first two do not each leave alone.
    func coalesceWrites() {
        // A unix socket hands each write to the broker whole: there are no segments to hold back.
        guard let watch = socketWatch, !options.broker.usesUnixSocket else { return }
        let turn = loop.currentTurn
        if turn != publishTurn {
            publishTurn = turn
            publishesThisTurn = 0
            corkedThisTurn = false
        }
        publishesThisTurn += 1
        guard !corkedThisTurn, publishesThisTurn >= (loop.expectsBurst ? 1 : Self.firstCorkedPublish) else { return }
        corkedThisTurn = true
        statistics.coalescedTurns += 1
        watch.setCorked(true)
        // On a plain link libmosquitto writes this turn's publishes at its end (`writeOut`): that must come before
        // the uncork, which runs at the turn's end too, in the order the two were asked for.
        if writesPlainPublishes { scheduleWriteOut() }
        loop.atTurnEnd { [self] in self.loopIsolated { $0.socketWatch?.setCorked(false) } }
    }

    /// The publish of a turn, counted from 1, from which the socket is corked (see `coalesceWrites`).
    static let firstCorkedPublish = 3

    /// Whether the broker socket holds segments back now (TCP_CORK); nil while there is no socket.
    package var isSocketCorked: Bool? { socketWatch?.isCorked }

    private func hasCapacity(for qos: MQTTQoS) -> Bool {
        if qos > .atMostOnce { return outstanding.count < options.maxOutstandingPublishes }
        return hasRoomForQoS0  // off a link it fails fast: notConnected
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

/// What `publishOnLoop` of one message hands to the actor.
private struct PublishOne {
    let message: MQTTMessage
    let onCapacity: @Sendable () -> Void
}
