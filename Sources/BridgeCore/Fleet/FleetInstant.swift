/// A moment on the fleet protocol's clock, in milliseconds from an arbitrary origin.
///
/// The ownership state machine never reads a clock: whoever drives it passes `now` with every event, so the
/// daemon can use the monotonic clock and the simulator its own virtual time.
package struct FleetInstant: Comparable, Hashable, Sendable, CustomStringConvertible {
    package var milliseconds: Int64

    package init(milliseconds: Int64) {
        self.milliseconds = milliseconds
    }

    package static func < (lhs: FleetInstant, rhs: FleetInstant) -> Bool { lhs.milliseconds < rhs.milliseconds }

    package static func + (lhs: FleetInstant, rhs: Duration) -> FleetInstant {
        FleetInstant(milliseconds: lhs.milliseconds + rhs.fleetMilliseconds)
    }

    /// The time from `earlier` to this instant.
    package func since(_ earlier: FleetInstant) -> Duration { .milliseconds(milliseconds - earlier.milliseconds) }

    package var description: String { "\(milliseconds) ms" }
}

extension Duration {
    /// Whole milliseconds, rounded towards zero.
    package var fleetMilliseconds: Int64 {
        let parts = components
        return parts.seconds * 1_000 + parts.attoseconds / 1_000_000_000_000_000
    }
}
