package import MQTTCore

/// The link of one device the bridge connects to: connect policy, backoff, InProgress retries, availability and
/// the idle disconnect of `on_demand` devices. Pure: events in, actions out, time passed in.
///
/// States: idle → connecting → online → (lost) → backingOff → connecting …; `stopped` after shutdown.
/// The runtime performs each action and reports the outcome as the next event; a timer it was asked to start
/// reports `retryTimerFired` or `idleTimerFired`.
package struct DeviceLinkStateMachine<Instant: InstantProtocol>: Sendable where Instant.Duration == Duration {
    package enum Policy: Sendable, Equatable {
        /// Connected while the device is around, reconnected with backoff.
        case always
        /// Connected for a command, disconnected after `idle` without one.
        case onDemand(idle: Duration)
        /// Never connected: only its advertisements are used.
        case never
    }

    package enum State: Sendable, Equatable {
        case idle
        case connecting(inProgressRetries: Int)
        case online
        case backingOff
        case stopped
    }

    /// Why a connect attempt failed, as far as the policy cares.
    package enum Failure: Sendable, Equatable {
        /// BlueZ is busy with another operation on the device (org.bluez.Error.InProgress): retried soon.
        case inProgress
        /// Anything else: retried after the backoff (`always`) or reported (`on_demand`).
        case failed
    }

    package enum Action: Sendable, Equatable {
        case connect
        case retryConnect(after: Duration)
        case publishAvailability(online: Bool)
        case startIdleTimer(after: Duration)
        case disconnect(reason: String)
        case none
    }

    package private(set) var state: State = .idle
    package let policy: Policy
    /// How many InProgress refusals are retried (with the short backoff) before the attempt counts as failed.
    package let maxInProgressRetries: Int
    private var backoff: JitteredBackoff
    private var inProgressBackoff: JitteredBackoff
    private var lastActivity: Instant?
    /// Availability as last published, so that the same state is not published twice.
    package private(set) var published: Bool?

    /// - Parameter available: the availability already published, if any (nothing is published again to say it).
    package init(
        policy: Policy, backoff: JitteredBackoff, inProgressBackoff: JitteredBackoff, maxInProgressRetries: Int = 5,
        available: Bool? = nil
    ) {
        published = available
        self.policy = policy
        self.backoff = backoff
        self.inProgressBackoff = inProgressBackoff
        self.maxInProgressRetries = maxInProgressRetries
    }

    /// The device is tracked. An `always` device connects; a passive one is available while it is heard.
    package mutating func deviceTracked() -> [Action] {
        switch policy {
        case .always:
            state = .connecting(inProgressRetries: 0)
            return [.connect]
        case .never:
            return publish(true)
        case .onDemand:
            return []
        }
    }

    /// A command needs the link (`on_demand`, or an `always` device between attempts): connect now.
    package mutating func connectRequested() -> [Action] {
        switch state {
        case .idle, .backingOff:
            state = .connecting(inProgressRetries: 0)
            return [.connect]
        case .connecting, .online, .stopped:
            return []
        }
    }

    /// Connected, services resolved and notifications subscribed.
    package mutating func connectSucceeded(at now: Instant) -> [Action] {
        guard case .connecting = state else { return [] }
        state = .online
        backoff.reset()
        inProgressBackoff.reset()
        lastActivity = now
        var actions = publish(true)
        if case .onDemand(let idle) = policy { actions.append(.startIdleTimer(after: idle)) }
        return actions
    }

    package mutating func connectFailed(_ failure: Failure) -> [Action] {
        guard case .connecting(let retries) = state else { return [] }
        if failure == .inProgress && retries < maxInProgressRetries {
            state = .connecting(inProgressRetries: retries + 1)
            return [.retryConnect(after: inProgressBackoff.next())]
        }
        inProgressBackoff.reset()
        return afterLoss()
    }

    /// The connection dropped (BlueZ reports Connected false, or the device vanished).
    package mutating func linkLost() -> [Action] {
        switch state {
        case .online, .connecting: return afterLoss()
        case .idle, .backingOff, .stopped: return []
        }
    }

    /// The backoff after a failure or loss has passed.
    package mutating func retryTimerFired() -> [Action] {
        guard state == .backingOff else {
            if case .connecting = state { return [.connect] }  // an InProgress retry
            return []
        }
        state = .connecting(inProgressRetries: 0)
        return [.connect]
    }

    /// A command ran on the device: the idle timeout starts again.
    package mutating func commandFinished(at now: Instant) {
        lastActivity = now
    }

    /// The idle timer of an `on_demand` device fired: disconnect if no command ran since `idle`, else wait on.
    package mutating func idleTimerFired(at now: Instant, commandRunning: Bool) -> [Action] {
        guard case .onDemand(let idle) = policy, state == .online else { return [] }
        let since = lastActivity.map { $0.duration(to: now) } ?? idle
        if commandRunning || since < idle { return [.startIdleTimer(after: idle - (commandRunning ? .zero : since))] }
        return [.disconnect(reason: "idle_timeout")]
    }

    /// The bridge stops: the link is ended and the device said offline, whatever its state.
    package mutating func shutdown() -> [Action] {
        let wasOnline = state == .online
        state = .stopped
        var actions: [Action] = wasOnline ? [.disconnect(reason: "stopping")] : []
        actions += publish(false)
        return actions
    }

    private mutating func afterLoss() -> [Action] {
        var actions = publish(false)
        switch policy {
        case .always:
            state = .backingOff
            actions.append(.retryConnect(after: backoff.next()))
        case .onDemand, .never:
            state = .idle
        }
        return actions
    }

    private mutating func publish(_ online: Bool) -> [Action] {
        guard published != online else { return [] }
        published = online
        return [.publishAvailability(online: online)]
    }
}
