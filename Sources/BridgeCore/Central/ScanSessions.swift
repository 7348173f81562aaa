/// The `bridge/request/scan` sessions in progress: at most `maximum` at once, each ending at its deadline.
/// Pure: time passed in.
package struct ScanSessions<Instant: InstantProtocol>: Sendable where Instant.Duration == Duration {
    package enum StartAction: Sendable, Equatable {
        /// Run the scan; its timer ends it at `endsAfter` (call `ended(id)`).
        case started(id: Int, endsAfter: Duration)
        case refused(running: Int)
    }

    package let maximum: Int
    package let longest: Duration
    private var running: [Int: Instant] = [:]
    private var nextID = 0

    package init(maximum: Int, longest: Duration) {
        self.maximum = maximum
        self.longest = longest
    }

    package var count: Int { running.count }

    /// A scan asked to last `duration` (cut to `longest`).
    package mutating func start(duration: Duration, at now: Instant) -> StartAction {
        guard running.count < maximum else { return .refused(running: running.count) }
        nextID += 1
        let length = min(duration, longest)
        running[nextID] = now.advanced(by: length)
        return .started(id: nextID, endsAfter: length)
    }

    /// A scan ended (its timer fired or it was cancelled); true when it was running. Discovery stays on while this
    /// leaves others running.
    package mutating func ended(_ id: Int) -> Bool {
        running.removeValue(forKey: id) != nil
    }

    /// The sessions whose end is at or before `now` (a timer late for any reason still ends them).
    package mutating func expired(at now: Instant) -> [Int] {
        let ids = running.filter { $0.value <= now }.map(\.key).sorted()
        for id in ids { running[id] = nil }
        return ids
    }
}
