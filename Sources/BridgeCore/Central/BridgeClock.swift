#if canImport(Glibc)
    import Glibc
#endif

/// The clock a bridge takes its time from: any `Clock` with `Duration`s (the continuous clock in the daemon, a
/// manual one in tests), seen through one concrete type so that the bridge's state can store its instants.
///
/// Instants are durations since the clock was wrapped, so every state machine and timestamp of a bridge agrees
/// with its sleeps: a test that advances a manual clock moves both.
package final class BridgeClock: Clock, Sendable {
    package struct Instant: InstantProtocol, CustomStringConvertible {
        /// Time since the clock was wrapped.
        package var offset: Duration

        package init(offset: Duration) { self.offset = offset }
        package func advanced(by duration: Duration) -> Instant { Instant(offset: offset + duration) }
        package func duration(to other: Instant) -> Duration { other.offset - offset }
        package static func < (lhs: Instant, rhs: Instant) -> Bool { lhs.offset < rhs.offset }
        package var description: String { "\(offset)" }
    }

    /// How `now` reads the time.
    private enum Reading: Sendable {
        /// Any clock, through its `Clock` conformance: the time since the clock was wrapped.
        case elapsed(@Sendable () -> Duration)
        #if os(Linux)
            /// The daemon's clock: CLOCK_BOOTTIME (what `ContinuousClock` reads on Linux, so its sleeps agree), in
            /// nanoseconds at the origin.
            case bootTime(origin: Int64)
        #endif
    }

    private let reading: Reading
    private let sleeper: @Sendable (Duration) async throws -> Void
    package let minimumResolution: Duration

    package init<C: Clock>(_ clock: C) where C.Duration == Duration {
        let origin = clock.now
        reading = .elapsed { origin.duration(to: clock.now) }
        sleeper = Self.sleeper(clock)
        minimumResolution = clock.minimumResolution
    }

    /// Sleeps for a duration on `clock`.
    private static func sleeper<C: Clock>(_ clock: C) -> @Sendable (Duration) async throws -> Void
    where C.Duration == Duration {
        { duration in try await clock.sleep(until: clock.now.advanced(by: duration), tolerance: nil) }
    }

    #if os(Linux)
        private init(bootTimeFrom origin: Int64) {
            let clock = ContinuousClock()
            reading = .bootTime(origin: origin)
            sleeper = Self.sleeper(clock)
            minimumResolution = clock.minimumResolution
        }

        private static func bootTimeNanoseconds() -> Int64 {
            var time = timespec()
            clock_gettime(CLOCK_BOOTTIME, &time)
            return Int64(time.tv_sec) &* 1_000_000_000 &+ Int64(time.tv_nsec)
        }

        /// The daemon's clock.
        package static var continuous: BridgeClock { BridgeClock(bootTimeFrom: bootTimeNanoseconds()) }
    #else
        /// The daemon's clock.
        package static var continuous: BridgeClock { BridgeClock(ContinuousClock()) }
    #endif

    /// Read on every advertisement. The daemon's clock reads CLOCK_BOOTTIME itself: through the closure, the
    /// `Clock` witnesses and the 128-bit subtraction of two `ContinuousClock` instants it ran 260 instructions on
    /// five pages of code apart from the rest of a report's.
    package var now: Instant {
        switch reading {
        case .elapsed(let elapsed):
            return Instant(offset: elapsed())
        #if os(Linux)
            case .bootTime(let origin):
                return Instant(offset: .nanoseconds(Self.bootTimeNanoseconds() &- origin))
        #endif
        }
    }

    package func sleep(until deadline: Instant, tolerance: Duration? = nil) async throws {
        try await sleeper(now.duration(to: deadline))
    }
}
