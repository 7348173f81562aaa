/// When to log a refused piece of MQTT input: a retained command once per topic (the broker hands it over again on
/// every reconnect), anything else a few times a minute per reason and topic. Every refusal is counted anyway.
package struct RefusalLog: Sendable {
    private var general = LogRateLimiter()
    private var retained = LogRateLimiter(burst: 1, window: .seconds(1 << 40))

    package init() {}

    /// A refused command or request, at `now` (a duration since a fixed origin).
    package mutating func report(_ refusal: CommandRefusal, topic: String, at now: Duration) -> LogRateLimiter.Decision
    {
        refusal == .retained
            ? retained.report(topic, at: now) : general.report(refusal.metricReason + " " + topic, at: now)
    }

    /// Any other refusal, by a reason of the caller's.
    package mutating func report(_ reason: String, topic: String, at now: Duration) -> LogRateLimiter.Decision {
        general.report(reason + " " + topic, at: now)
    }
}
