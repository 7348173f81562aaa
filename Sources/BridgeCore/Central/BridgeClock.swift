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

    private let elapsed: @Sendable () -> Duration
    private let sleeper: @Sendable (Duration) async throws -> Void
    package let minimumResolution: Duration

    package init<C: Clock>(_ clock: C) where C.Duration == Duration {
        let origin = clock.now
        elapsed = { origin.duration(to: clock.now) }
        sleeper = { duration in try await clock.sleep(until: clock.now.advanced(by: duration), tolerance: nil) }
        minimumResolution = clock.minimumResolution
    }

    /// The daemon's clock.
    package static var continuous: BridgeClock { BridgeClock(ContinuousClock()) }

    package var now: Instant { Instant(offset: elapsed()) }

    package func sleep(until deadline: Instant, tolerance: Duration? = nil) async throws {
        try await sleeper(now.duration(to: deadline))
    }
}
