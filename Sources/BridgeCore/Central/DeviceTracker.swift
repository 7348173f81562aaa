/// Which advertisers the bridge tracks. Pure: time passed in.
///
/// Devices configured by address are always tracked. Devices found by a `match:` rule share `matchedCapacity`
/// slots, which anyone can claim by advertising a matching name, so a slot is held only while it is used: a
/// matched device unheard for `unheardTimeout` is let go, and when the slots are full a newcomer takes the slot of
/// the matched device heard least recently, provided that one has been silent for at least `evictableAfter`.
/// Otherwise the newcomer is refused (and counted by the caller). Finding the one to evict is one pass, only when
/// full.
package struct DeviceTracker<Key: Hashable & Sendable, Instant: InstantProtocol>: Sendable
where Instant.Duration == Duration {
    package enum Admission: Sendable, Equatable {
        case tracked
        case alreadyTracked
        /// Tracked in the slot of `evicted`, which is no longer tracked.
        case trackedEvicting(Key)
        case refused
    }

    private struct Entry: Sendable {
        var lastHeard: Instant
        let byAddress: Bool
    }

    package let matchedCapacity: Int
    package let unheardTimeout: Duration
    package let evictableAfter: Duration
    private var entries: [Key: Entry] = [:]
    private var matchedCount = 0

    package init(matchedCapacity: Int, unheardTimeout: Duration, evictableAfter: Duration) {
        self.matchedCapacity = matchedCapacity
        self.unheardTimeout = unheardTimeout
        self.evictableAfter = evictableAfter
    }

    package var count: Int { entries.count }
    package func isTracked(_ key: Key) -> Bool { entries[key] != nil }

    /// A device matching the configuration was heard (an advertisement, an RSSI change).
    /// - Parameter evictable: whether a tracked matched device may give up its slot (a connected one may not).
    // Specialized here for the bridge's keys and clock and exported: called per advertisement from another module.
    @_specialize(exported:true,where Key == String, Instant == BridgeClock.Instant)
    package mutating func heard(
        _ key: Key, byAddress: Bool, at now: Instant, evictable: (Key) -> Bool = { _ in true }
    ) -> Admission {
        if entries[key] != nil {
            entries[key]?.lastHeard = now
            return .alreadyTracked
        }
        if byAddress {
            entries[key] = Entry(lastHeard: now, byAddress: true)
            return .tracked
        }
        if matchedCount < matchedCapacity {
            entries[key] = Entry(lastHeard: now, byAddress: false)
            matchedCount += 1
            return .tracked
        }
        var oldest: (key: Key, heard: Instant)?
        for (candidate, entry) in entries where !entry.byAddress && evictable(candidate) {
            if oldest == nil || entry.lastHeard < oldest!.heard { oldest = (candidate, entry.lastHeard) }
        }
        guard let oldest, oldest.heard.duration(to: now) >= evictableAfter else { return .refused }
        entries[oldest.key] = nil
        entries[key] = Entry(lastHeard: now, byAddress: false)
        return .trackedEvicting(oldest.key)
    }

    /// Matched devices not heard for `unheardTimeout`: no longer tracked.
    package mutating func expireUnheard(at now: Instant) -> [Key] {
        let expired = entries.filter { !$0.value.byAddress && $0.value.lastHeard.duration(to: now) >= unheardTimeout }
            .map(\.key)
        for key in expired { forget(key) }
        return expired
    }

    /// The device is no longer tracked (removed by BlueZ or by a request).
    package mutating func forget(_ key: Key) {
        guard let entry = entries.removeValue(forKey: key) else { return }
        if !entry.byAddress { matchedCount -= 1 }
    }
}
