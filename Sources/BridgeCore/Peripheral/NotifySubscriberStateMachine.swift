/// One subscriber of a local characteristic (a central's notification link, or the stack's StartNotify session):
/// its bounded queue, the value in flight, the indication awaiting its confirmation, and the rules that end a
/// subscriber that does not keep up. Pure: events and time in, actions out.
///
/// Two rules bound what one subscriber can cost the others:
/// - **stalled**: values wait and nothing was sent or confirmed for `stallLimit` (a link that never drains, a
///   central that never confirms its indications);
/// - **backpressure held**: under the `backpressure` policy, once the queue refused a value (the producer, which
///   serves every characteristic of the MQTT connection, then waits), the queue must empty within `stallLimit`. A
///   central that drains, but more slowly than its source publishes, would otherwise hold the connection for ever.
/// Either ends the subscriber (``NextAction/drop(_:)``); the caller closes its link and counts the reason.
///
/// An indication unconfirmed after `confirmTimeout` counts as done (as bluetoothd itself gives up on it), so the
/// next value can go; a subscriber that keeps failing to confirm falls under the stall rule first.
///
/// Not generic over its clock: the local peripheral calls it from another module four times per value, and a
/// generic type called there unspecialized looked its `Optional<Instant>` metadata up in the runtime's cache at
/// each call (about 1,600 instructions a value). Tests drive it through `BridgeClock` with a manual clock.
package struct NotifySubscriberStateMachine: Sendable {
    package typealias Instant = BridgeClock.Instant

    package struct Limits: Sendable, Hashable {
        package var confirmTimeout: Duration
        package var stallLimit: Duration

        package init(confirmTimeout: Duration = .seconds(30), stallLimit: Duration = .seconds(10)) {
            self.confirmTimeout = confirmTimeout
            self.stallLimit = stallLimit
        }
    }

    package enum DropReason: String, Sendable, Hashable, CaseIterable {
        case stalled
        case backpressureHeld = "backpressure_held"
    }

    package enum NextAction: Sendable, Equatable {
        /// Send this value now, then report ``valueSent(at:)``, ``linkReportedFull()`` or ``linkClosed()``.
        case send([UInt8])
        /// Nothing to do until an event, or until the instant given (then ask again).
        case wait(until: Instant?)
        /// The subscriber does not keep up: close it and count the reason.
        case drop(DropReason)
        /// The subscriber is closed: its task ends.
        case finish
    }

    package struct Counters: Sendable, Hashable {
        package var queued = 0
        package var notifications = 0
        package var indications = 0
        /// Values longer than one notification carries, sent cut to that length.
        package var truncated = 0
        /// Values the queue policy discarded.
        package var dropped = 0
        /// Indications that went unconfirmed for the confirm timeout.
        package var confirmTimeouts = 0

        package init() {}
    }

    package let indicates: Bool
    package let limits: Limits
    private var queue: NotifyQueue
    private var inFlight = false
    /// An indication was sent and awaits its confirmation until this instant.
    private var confirmDeadline: Instant?
    /// A confirmation that arrived while its indication was still being sent.
    private var earlyConfirmation = false
    /// The link is full: nothing is sent until it says it is writable.
    private var linkFull = false
    /// Since when values have waited with nothing sent or confirmed.
    private var waitingSince: Instant?
    /// Since when the producer was refused and the queue has not yet emptied (backpressure only).
    private var holdingSince: Instant?
    private var closed = false
    /// Why the subscriber was dropped, if it was.
    package private(set) var dropReason: DropReason?
    package private(set) var counters = Counters()

    package init(indicates: Bool, capacity: Int, policy: NotifyQueue.Policy, limits: Limits) {
        self.indicates = indicates
        self.limits = limits
        queue = NotifyQueue(capacity: capacity, policy: policy)
    }

    /// True when the producer may offer without being refused (always once closed: a closed subscriber takes and
    /// forgets everything, so it never holds the producer).
    package var hasRoom: Bool { closed || queue.hasRoom }
    package var isClosed: Bool { closed }
    package var queuedCount: Int { queue.count }

    // MARK: - Events

    /// A new value of the characteristic.
    package mutating func valueOffered(_ value: [UInt8], at now: Instant) -> NotifyQueue.Offer {
        guard !closed else { return .queued }
        // The value in flight is first in the queue: a dropping policy must not take it (it would count a value
        // that is being sent as dropped, and the removal of the sent value would then take the new one).
        let offer = inFlight ? queue.offerBehindFirst(value) : queue.offer(value)
        switch offer {
        case .queued: break
        case .full: if holdingSince == nil { holdingSince = now }
        case .dropped(let count): counters.dropped += count
        }
        if waitingSince == nil && !queue.isEmpty { waitingSince = now }
        return offer
    }

    /// True when a new value may go out at once, bypassing the queue and the subscriber's task: nothing waits, is
    /// in flight or awaits a confirmation, the link has room, and the value is a notification (an indication's
    /// confirmation is timed by the subscriber's task).
    package var canSendAtOnce: Bool {
        !closed && !indicates && queue.isEmpty && !inFlight && !linkFull && confirmDeadline == nil
    }

    /// A new value the caller sends at once (only when ``canSendAtOnce``): it is in flight as if ``nextAction(at:)``
    /// had returned `.send` of it, so the caller reports the outcome the same way (``valueSent(at:cut:)``,
    /// ``linkReportedFull()``, ``linkClosed()``). A link found full keeps it first in the queue for the subscriber's
    /// task, like any other value.
    package mutating func valueSendingAtOnce(_ value: [UInt8], at now: Instant) {
        precondition(canSendAtOnce, "a value sent at once needs an idle subscriber")
        _ = queue.offer(value)
        waitingSince = now
        inFlight = true
    }

    /// The producer found the queue full and waits for room (backpressure): the hold is timed from the first time.
    package mutating func producerWaited(at now: Instant) {
        if !closed && !queue.hasRoom && holdingSince == nil { holdingSince = now }
    }

    /// The value of the last ``NextAction/send(_:)`` went out (`cut`: it was longer than the link carries).
    package mutating func valueSent(at now: Instant, cut: Bool = false) {
        guard inFlight else { return }
        inFlight = false
        if !queue.isEmpty { queue.removeFirst() }
        if cut { counters.truncated += 1 }
        if indicates {
            counters.indications += 1
            if earlyConfirmation {
                earlyConfirmation = false
                madeProgress(at: now)
            } else {
                confirmDeadline = now.advanced(by: limits.confirmTimeout)
                // Only values still queued are waiting: the one awaiting its confirmation has its own deadline.
                if queue.isEmpty {
                    waitingSince = nil
                    holdingSince = nil
                }
            }
        } else {
            counters.notifications += 1
            madeProgress(at: now)
        }
    }

    /// The link had no room for the value in flight: it stays first in the queue.
    package mutating func linkReportedFull() {
        inFlight = false
        linkFull = true
    }

    package mutating func linkWritable() {
        linkFull = false
    }

    /// The remote confirmed an indication.
    package mutating func confirmationReceived(at now: Instant) {
        if confirmDeadline != nil {
            confirmDeadline = nil
            madeProgress(at: now)
        } else if inFlight {
            earlyConfirmation = true
        }
    }

    /// The link is gone (closed by the stack, or by Gattway).
    package mutating func linkClosed() {
        closed = true
        inFlight = false
        queue.removeAll()
    }

    // MARK: - Decisions

    /// What the subscriber's task does next.
    package mutating func nextAction(at now: Instant) -> NextAction {
        if closed { return .finish }
        if let deadline = confirmDeadline, deadline <= now {
            confirmDeadline = nil
            counters.confirmTimeouts += 1
        }
        if let reason = stallReason(at: now) {
            dropReason = reason
            linkClosed()
            return .drop(reason)
        }
        if !inFlight, !linkFull, confirmDeadline == nil, let value = queue.first {
            inFlight = true
            return .send(value)
        }
        return .wait(until: nextDeadline)
    }

    /// The earliest instant at which a rule may fire.
    package var nextDeadline: Instant? {
        [confirmDeadline, waitingSince?.advanced(by: limits.stallLimit), holdingSince?.advanced(by: limits.stallLimit)]
            .compactMap { $0 }.min()
    }

    private func stallReason(at now: Instant) -> DropReason? {
        if let since = holdingSince, since.advanced(by: limits.stallLimit) <= now { return .backpressureHeld }
        if let since = waitingSince, since.advanced(by: limits.stallLimit) <= now { return .stalled }
        return nil
    }

    private mutating func madeProgress(at now: Instant) {
        waitingSince = queue.isEmpty ? nil : now
        if queue.isEmpty { holdingSince = nil }
    }

    /// Counters including what waits now.
    package var snapshot: Counters {
        var counters = self.counters
        counters.queued = queue.count
        return counters
    }
}
