import Glibc

/// Nanoseconds of CLOCK_MONOTONIC, for what the loop's threads time on every turn: the loop's timers and the D-Bus
/// connection's read pacing. `ContinuousClock`'s instants and durations cost several times the instructions and code
/// pages, on paths that run for every message.
package enum MonotonicTime {
    /// Now.
    package static func now() -> UInt64 {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return UInt64(time.tv_sec) &* 1_000_000_000 &+ UInt64(time.tv_nsec)
    }

    /// `duration` in nanoseconds: 0 when negative, at most about 292 years.
    package static func nanoseconds(_ duration: Duration) -> UInt64 {
        let (seconds, attoseconds) = duration.components
        guard seconds >= 0, attoseconds >= 0 || seconds > 0 else { return 0 }
        let limit: UInt64 = 1 << 63
        guard UInt64(seconds) < limit / 1_000_000_000 else { return limit }
        // Rounded up to whole nanoseconds, so a timer never fires before its delay.
        let fraction = Int64((attoseconds + 999_999_999) / 1_000_000_000)
        return UInt64(max(0, seconds * 1_000_000_000 + fraction))
    }
}
