/// Rate limit of one device's advert topic: a changed advert is published at once unless one went out less than
/// `minimumInterval` ago; then the newest one goes out when the interval is over. Pure: time passed in.
package struct AdvertThrottle<Instant: InstantProtocol>: Sendable where Instant.Duration == Duration {
    package enum Action: Sendable, Equatable {
        case publish([UInt8])
        /// Start a timer; call `flushTimerFired` after `after`.
        case scheduleFlush(after: Duration)
        case none
    }

    package let minimumInterval: Duration
    private var lastPublished: Instant?
    private var lastPayload: [UInt8]?
    private var pending: [UInt8]?
    private var flushScheduled = false

    package init(minimumInterval: Duration) {
        self.minimumInterval = minimumInterval
    }

    // Specialized here for the bridge's clock and exported: called per advertisement from another module.
    @_specialize(exported:true,where Instant == BridgeClock.Instant)
    package mutating func advertChanged(_ payload: [UInt8], at now: Instant) -> Action {
        guard payload != lastPayload else {
            pending = nil  // back to what was published: nothing left to flush
            return .none
        }
        if let lastPublished, lastPublished.duration(to: now) < minimumInterval {
            pending = payload
            guard !flushScheduled else { return .none }
            flushScheduled = true
            return .scheduleFlush(after: minimumInterval - lastPublished.duration(to: now))
        }
        return publish(payload, at: now)
    }

    package mutating func flushTimerFired(at now: Instant) -> Action {
        flushScheduled = false
        guard let pending else { return .none }
        return publish(pending, at: now)
    }

    private mutating func publish(_ payload: [UInt8], at now: Instant) -> Action {
        lastPublished = now
        lastPayload = payload
        pending = nil
        return .publish(payload)
    }
}
