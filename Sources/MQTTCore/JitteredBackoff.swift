/// Exponential backoff with jitter, for reconnects and retries. Pure: it only computes delays.
///
/// The n-th delay is `min(maximum, initial × multiplierⁿ)`, then scaled by a random factor in
/// `[1 − jitter, 1]` so that many gateways restarted together do not reconnect in lockstep.
package struct JitteredBackoff: Sendable {
    package let initial: Duration
    package let maximum: Duration
    package let multiplier: Double
    /// The fraction (0...1) of each delay that may be taken off at random.
    package let jitter: Double
    private var attempt = 0
    private var random: any RandomNumberGenerator & Sendable

    package init(
        initial: Duration = .milliseconds(500), maximum: Duration = .seconds(30), multiplier: Double = 2,
        jitter: Double = 0.2, random: any RandomNumberGenerator & Sendable = SystemRandomNumberGenerator()
    ) {
        precondition(initial > .zero && maximum >= initial, "backoff needs 0 < initial <= maximum")
        precondition(multiplier >= 1, "a backoff multiplier below 1 would shrink the delays")
        precondition((0...1).contains(jitter), "backoff jitter is a fraction from 0 to 1")
        self.initial = initial
        self.maximum = maximum
        self.multiplier = multiplier
        self.jitter = jitter
        self.random = random
    }

    /// The number of delays handed out since the last `reset()`.
    package var attempts: Int { attempt }

    /// The delay before the next attempt; each call grows the following one until `maximum`.
    package mutating func next() -> Duration {
        let base = min(maximum.seconds, initial.seconds * pow(multiplier, Double(min(attempt, 64))))
        attempt += 1
        guard jitter > 0 else { return .seconds(base) }
        let fraction = Double.random(in: 0...1, using: &random)
        return .seconds(base * (1 - jitter * fraction))
    }

    /// Starts over from `initial`, after a success.
    package mutating func reset() { attempt = 0 }
}

extension Duration {
    /// The duration in seconds as a floating-point number.
    fileprivate var seconds: Double {
        let parts = components
        return Double(parts.seconds) + Double(parts.attoseconds) / 1e18
    }
}

/// `pow` without importing Foundation or Glibc into the pure core.
private func pow(_ base: Double, _ exponent: Double) -> Double {
    var result = 1.0
    var remaining = Int(exponent)
    while remaining > 0 {
        result *= base
        remaining -= 1
    }
    return result
}
