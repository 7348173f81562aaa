/// Decides which reports of bad input reach the log, so a flood of hostile messages cannot flood the log too.
///
/// Per key (say, a refusal reason and a topic), the first ``burst`` reports in each ``window`` are logged; the
/// rest are only counted, and the next report that is logged carries how many were suppressed before it. Time
/// arrives as input, so tests decide it. Keys are bounded too: past ``maximumKeys``, the oldest window's keys are
/// forgotten (a forgotten key simply starts a fresh window).
package struct LogRateLimiter: Sendable {
    /// What to do with one report.
    package enum Decision: Sendable, Hashable {
        /// Log it; `suppressed` reports of the same key were dropped since the last logged one.
        case log(suppressed: Int)
        /// Count it only.
        case suppress
    }

    private struct Window: Sendable {
        var start: Duration
        var logged: Int
        var suppressed: Int
    }

    package let burst: Int
    package let window: Duration
    package let maximumKeys: Int
    private var windows: [String: Window] = [:]

    package init(burst: Int = 3, window: Duration = .seconds(60), maximumKeys: Int = 256) {
        self.burst = max(burst, 1)
        self.window = window
        self.maximumKeys = max(maximumKeys, 1)
    }

    /// Records a report of `key` at time `now` (any monotonic time, as a duration since a fixed origin).
    package mutating func report(_ key: String, at now: Duration) -> Decision {
        var state = windows[key] ?? Window(start: now, logged: 0, suppressed: 0)
        if now - state.start >= window {
            state = Window(start: now, logged: 0, suppressed: state.suppressed)
        }
        let decision: Decision
        if state.logged < burst {
            decision = .log(suppressed: state.suppressed)
            state.logged += 1
            state.suppressed = 0
        } else {
            decision = .suppress
            state.suppressed += 1
        }
        if windows[key] == nil, windows.count >= maximumKeys {
            // Drop the oldest keys; their suppressed counts were already counted in metrics.
            let oldest = windows.sorted { $0.value.start < $1.value.start }.prefix(windows.count / 2 + 1)
            for (oldKey, _) in oldest { windows[oldKey] = nil }
        }
        windows[key] = state
        return decision
    }
}
