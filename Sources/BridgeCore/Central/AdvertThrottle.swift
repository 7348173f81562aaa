import BluetoothCore

/// Rate limit of one device's advert topic: a changed advert is published at once unless one went out less than
/// `minimumInterval` ago; then the newest one goes out when the interval is over. Pure: time passed in.
///
/// The advert itself (a JSON document) is made only when it may go out: a change within the interval only marks it
/// due, and the flush makes the newest. A sensor's RSSI changes with nearly every report while duplicates are on,
/// so most changes fall within an interval, where making the document each time cost more than the rest of the
/// report.
package struct AdvertThrottle<Instant: InstantProtocol>: Sendable where Instant.Duration == Duration {
    /// What to do about a change.
    package enum Change: Sendable, Equatable {
        /// It may go out now: make the advert and hand it to `publishIfNew`.
        case makeAdvert
        /// Start a timer; call `flushTimerFired` after `after`.
        case scheduleFlush(after: Duration)
        case none
    }

    package let minimumInterval: Duration
    private var lastPublished: Instant?
    /// The advert published last (when `hasPublished`).
    private var lastPayload: [UInt8] = []
    private var hasPublished = false
    /// The advert changed since it was last published (or found unchanged).
    private var changed = false
    private var flushScheduled = false

    package init(minimumInterval: Duration) {
        self.minimumInterval = minimumInterval
    }

    // Specialized here for the bridge's clock and exported: called per advertisement from another module.
    @_specialize(exported:true,where Instant == BridgeClock.Instant)
    package mutating func advertChanged(at now: Instant) -> Change {
        if let lastPublished, lastPublished.duration(to: now) < minimumInterval {
            changed = true
            guard !flushScheduled else { return .none }
            flushScheduled = true
            return .scheduleFlush(after: minimumInterval - lastPublished.duration(to: now))
        }
        return .makeAdvert
    }

    /// The flush timer fired: whether the advert changed since it was last published (then make it and hand it to
    /// `publishIfNew`).
    package mutating func flushTimerFired() -> Bool {
        flushScheduled = false
        return changed
    }

    /// The newest advert, written into `payload` when `advertChanged` or `flushTimerFired` said so: what to publish,
    /// or nil when it is the one published last. When it is new, `payload` gets back the room of the one before it,
    /// to write the next into: a device's adverts are written in place, with no array made for each.
    @_specialize(exported:true,where Instant == BridgeClock.Instant)
    package mutating func publishIfNew(_ payload: inout [UInt8], at now: Instant) -> [UInt8]? {
        changed = false
        if hasPublished, payload.hasSameBytes(as: lastPayload) { return nil }
        swap(&payload, &lastPayload)
        hasPublished = true
        lastPublished = now
        return lastPayload
    }
}
