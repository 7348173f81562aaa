import MQTTCore
import Testing

/// A deterministic generator (SplitMix64) so jitter is reproducible.
struct SeededRandom: RandomNumberGenerator, Sendable {
    var state: UInt64
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

@Suite struct JitteredBackoffTests {
    @Test func growsExponentiallyUpToTheMaximumWithoutJitter() {
        var backoff = JitteredBackoff(initial: .milliseconds(100), maximum: .seconds(1), multiplier: 2, jitter: 0)
        let delays = (0..<6).map { _ in backoff.next() }
        #expect(
            delays == [
                .milliseconds(100), .milliseconds(200), .milliseconds(400), .milliseconds(800), .seconds(1),
                .seconds(1),
            ])
        #expect(backoff.attempts == 6)
    }

    @Test func resetStartsOver() {
        var backoff = JitteredBackoff(initial: .milliseconds(100), maximum: .seconds(1), jitter: 0)
        _ = backoff.next()
        _ = backoff.next()
        backoff.reset()
        #expect(backoff.next() == .milliseconds(100))
    }

    @Test func jitterStaysWithinItsFractionAndVaries() {
        var backoff = JitteredBackoff(
            initial: .seconds(1), maximum: .seconds(1), jitter: 0.5, random: SeededRandom(state: 42))
        let delays = (0..<200).map { _ in backoff.next() }
        #expect(delays.allSatisfy { $0 >= .milliseconds(500) && $0 <= .seconds(1) })
        #expect(Set(delays).count > 100)
    }

    @Test func sameSeedGivesSameDelays() {
        var first = JitteredBackoff(jitter: 0.3, random: SeededRandom(state: 7))
        var second = JitteredBackoff(jitter: 0.3, random: SeededRandom(state: 7))
        #expect((0..<10).map { _ in first.next() } == (0..<10).map { _ in second.next() })
    }

    @Test func hugeAttemptCountsStayAtTheMaximum() {
        var backoff = JitteredBackoff(initial: .milliseconds(1), maximum: .seconds(30), jitter: 0)
        for _ in 0..<500 { _ = backoff.next() }
        #expect(backoff.next() == .seconds(30))
    }
}
