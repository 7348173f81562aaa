import Synchronization
import Testing

@testable import Polling

/// The loop's timer table on its own, with time passed in: order, repetition, cancellation, and the sleep it asks
/// `epoll_wait` for.
struct LoopTimerTableTests {
    private static let millisecond: UInt64 = 1_000_000

    /// What the handlers of one test ran, in order.
    private final class Log: Sendable {
        private let names = Mutex<[String]>([])
        func handler(_ name: String) -> @Sendable () -> Void { { self.names.withLock { $0.append(name) } } }
        func take() -> [String] {
            names.withLock { names in
                defer { names = [] }
                return names
            }
        }
    }

    /// Fires everything due at `now`, as the loop does; the names of the handlers run, in order.
    private static func fire(_ table: inout LoopTimerTable, now: UInt64, _ log: Log) -> [String] {
        while let handler = table.popDue(now: now) { handler() }
        return log.take()
    }

    @Test func durationsBecomeWholeNanosecondsRoundedUpAndNeverNegative() {
        #expect(MonotonicTime.nanoseconds(.seconds(2)) == 2_000_000_000)
        #expect(MonotonicTime.nanoseconds(.milliseconds(1500)) == 1_500_000_000)
        #expect(MonotonicTime.nanoseconds(.nanoseconds(7)) == 7)
        #expect(MonotonicTime.nanoseconds(.seconds(1) + .nanoseconds(1) / 2) == 1_000_000_001)
        #expect(MonotonicTime.nanoseconds(.zero) == 0)
        #expect(MonotonicTime.nanoseconds(.milliseconds(-5)) == 0)
        #expect(MonotonicTime.nanoseconds(.seconds(-1) + .milliseconds(1)) == 0)
        #expect(MonotonicTime.nanoseconds(.seconds(Int64.max)) == 1 << 63)
    }

    @Test func timersFireInDeadlineOrderAndTiesInTheOrderTheyWereAdded() {
        var table = LoopTimerTable()
        let log = Log()
        let start: UInt64 = 1_000 * Self.millisecond
        table.add(id: 1, after: .milliseconds(30), repeating: nil, now: start, log.handler("c"))
        table.add(id: 2, after: .milliseconds(10), repeating: nil, now: start, log.handler("a"))
        table.add(id: 3, after: .milliseconds(10), repeating: nil, now: start, log.handler("b"))
        #expect(Self.fire(&table, now: start + 9 * Self.millisecond, log).isEmpty)
        #expect(Self.fire(&table, now: start + 10 * Self.millisecond, log) == ["a", "b"])
        #expect(Self.fire(&table, now: start + 100 * Self.millisecond, log) == ["c"])
        #expect(table.isEmpty)
        #expect(table.timeoutMilliseconds(now: start) == -1)
    }

    @Test func theSleepIsRoundedUpToWholeMillisecondsAndZeroWhenATimerIsDue() {
        var table = LoopTimerTable()
        let log = Log()
        let start: UInt64 = 5 * Self.millisecond
        table.add(id: 1, after: .microseconds(2500), repeating: nil, now: start, log.handler("x"))
        #expect(table.timeoutMilliseconds(now: start) == 3)
        #expect(table.timeoutMilliseconds(now: start + 2 * Self.millisecond) == 1)
        #expect(table.timeoutMilliseconds(now: start + 2_500_000) == 0)
        #expect(table.timeoutMilliseconds(now: start + 60 * Self.millisecond) == 0)
    }

    @Test func aRepeatingTimerComesBackEveryPeriodButNotInABurstAfterALateTurn() {
        var table = LoopTimerTable()
        let log = Log()
        table.add(id: 1, after: .milliseconds(10), repeating: .milliseconds(10), now: 0, log.handler("tick"))
        #expect(Self.fire(&table, now: 10 * Self.millisecond, log) == ["tick"])
        #expect(table.timeoutMilliseconds(now: 10 * Self.millisecond) == 10)
        // The loop was away for 55 ms: one tick now, the next a period after the missed deadline but not before now.
        #expect(Self.fire(&table, now: 65 * Self.millisecond, log) == ["tick"])
        #expect(table.timeoutMilliseconds(now: 65 * Self.millisecond) == 10)
        #expect(Self.fire(&table, now: 74 * Self.millisecond, log).isEmpty)
        #expect(Self.fire(&table, now: 75 * Self.millisecond, log) == ["tick"])
    }

    @Test func aCancelledTimerNeverFiresAndDoesNotShortenTheSleep() {
        var table = LoopTimerTable()
        let log = Log()
        table.add(id: 1, after: .milliseconds(5), repeating: .milliseconds(5), now: 0, log.handler("cancelled"))
        table.add(id: 2, after: .milliseconds(50), repeating: nil, now: 0, log.handler("kept"))
        table.cancel(1)
        #expect(table.timeoutMilliseconds(now: 0) == 50)
        #expect(Self.fire(&table, now: 49 * Self.millisecond, log).isEmpty)
        #expect(Self.fire(&table, now: 50 * Self.millisecond, log) == ["kept"])
        #expect(table.isEmpty)
    }

    @Test func cancellingTheEarliestTimerAfterTheLoopAskedLengthensTheNextSleep() {
        var table = LoopTimerTable()
        let log = Log()
        table.add(id: 1, after: .milliseconds(5), repeating: nil, now: 0, log.handler("first"))
        table.add(id: 2, after: .milliseconds(20), repeating: nil, now: 0, log.handler("second"))
        table.add(id: 3, after: .milliseconds(40), repeating: nil, now: 0, log.handler("third"))
        #expect(table.timeoutMilliseconds(now: 0) == 5)
        #expect(table.timeoutMilliseconds(now: 0) == 5, "asked again, nothing changed")
        table.cancel(1)
        #expect(table.timeoutMilliseconds(now: 0) == 20)
        // Cancelling another timer than the earliest one leaves the earliest deadline.
        table.cancel(3)
        #expect(table.timeoutMilliseconds(now: 0) == 20)
        table.add(id: 4, after: .milliseconds(2), repeating: nil, now: 0, log.handler("fourth"))
        #expect(table.timeoutMilliseconds(now: 0) == 2)
        table.cancel(4)
        table.cancel(2)
        #expect(table.timeoutMilliseconds(now: 0) == -1)
        #expect(Self.fire(&table, now: 100 * Self.millisecond, log).isEmpty)
        // A repeating timer that fired stays the live earliest one with its next deadline.
        table.add(id: 5, after: .milliseconds(10), repeating: .milliseconds(10), now: 0, log.handler("tick"))
        #expect(table.timeoutMilliseconds(now: 0) == 10)
        #expect(Self.fire(&table, now: 10 * Self.millisecond, log) == ["tick"])
        #expect(table.timeoutMilliseconds(now: 10 * Self.millisecond) == 10)
        table.cancel(5)
        #expect(table.timeoutMilliseconds(now: 10 * Self.millisecond) == -1)
        #expect(table.isEmpty)
    }

    @Test func aDeadlineBeyondTheClockSaturatesInsteadOfWrappingToNow() {
        var table = LoopTimerTable()
        let log = Log()
        let now = UInt64.max - 10
        table.add(id: 1, after: .seconds(1), repeating: nil, now: now, log.handler("far"))
        // A wrapped deadline would be tiny, so due at once.
        #expect(table.timeoutMilliseconds(now: now) == 1, "due at UInt64.max: 10 ns away, rounded up")
        #expect(Self.fire(&table, now: now + 5, log).isEmpty)
        #expect(Self.fire(&table, now: .max, log) == ["far"])
    }
}
