import Glibc
import HeapModule

/// The timers of a `PollLoop`: handlers by id and a heap of deadlines, on the loop thread only.
///
/// Deadlines are nanoseconds of CLOCK_MONOTONIC in plain integers, not `ContinuousClock` instants: the loop asks
/// for the next deadline on every turn, and `Duration`'s 128-bit arithmetic cost more than the rest of the turn.
struct LoopTimerTable {
    private struct Record {
        let handler: @Sendable () -> Void
        let interval: UInt64?
    }

    private struct Deadline: Comparable {
        let at: UInt64
        let id: UInt64
        static func < (a: Self, b: Self) -> Bool { a.at < b.at || (a.at == b.at && a.id < b.id) }
    }

    private var records: [UInt64: Record] = [:]
    /// A cancelled timer's deadline stays here and is skipped when it comes up.
    private var deadlines = Heap<Deadline>()
    /// The id of the earliest deadline once `timeoutMilliseconds` found its timer live, until that timer is
    /// cancelled: the loop asks on every turn, and the answer rarely changes between two turns. Ids are never
    /// reused, so an id that left the heap cannot match a later minimum.
    private var liveMinimumID: UInt64?

    /// `time + nanoseconds`, saturating: a deadline centuries away stays the latest one.
    private static func adding(_ nanoseconds: UInt64, to time: UInt64) -> UInt64 {
        let (sum, overflow) = time.addingReportingOverflow(nanoseconds)
        return overflow ? .max : sum
    }

    var isEmpty: Bool { records.isEmpty }

    mutating func add(
        id: UInt64, after delay: Duration, repeating interval: Duration?, now: UInt64,
        _ handler: @escaping @Sendable () -> Void
    ) {
        records[id] = Record(handler: handler, interval: interval.map { max(1, MonotonicTime.nanoseconds($0)) })
        deadlines.insert(Deadline(at: Self.adding(MonotonicTime.nanoseconds(delay), to: now), id: id))
    }

    mutating func cancel(_ id: UInt64) {
        records[id] = nil
        if id == liveMinimumID { liveMinimumID = nil }
    }

    /// How long `epoll_wait` may sleep: until the next deadline, rounded up to whole milliseconds (waking early
    /// would only spin until it); -1 without timers, 0 when one is due.
    mutating func timeoutMilliseconds(now: UInt64) -> Int32 {
        while let first = deadlines.min, first.id != liveMinimumID, records[first.id] == nil {
            _ = deadlines.removeMin()
        }
        guard let next = deadlines.min else { return -1 }
        liveMinimumID = next.id
        guard next.at > now else { return 0 }
        return Int32(clamping: (next.at - now + 999_999) / 1_000_000)
    }

    /// The handler of the earliest timer due at `now`, taken out of the table; nil when none is due. Call until nil:
    /// a handler may add or cancel timers in between. A repeating timer is set again a period after its deadline,
    /// or a period after `now` when the loop was so late that it missed periods: it fires once for them, not in a
    /// burst.
    mutating func popDue(now: UInt64) -> (@Sendable () -> Void)? {
        while let first = deadlines.min, first.at <= now {
            _ = deadlines.removeMin()
            guard let record = records[first.id] else { continue }
            if let interval = record.interval {
                let next = Self.adding(interval, to: first.at)
                deadlines.insert(Deadline(at: next > now ? next : Self.adding(interval, to: now), id: first.id))
            } else {
                records[first.id] = nil
            }
            return record.handler
        }
        return nil
    }

    mutating func removeAll() {
        records.removeAll()
        deadlines = Heap()
        liveMinimumID = nil
    }
}
