import BridgeCore
import Testing

@Suite struct AdvertThrottleTests {
    typealias Throttle = AdvertThrottle<ContinuousClock.Instant>
    let t0 = ContinuousClock.now

    @Test func changedAdvertsWithinTheIntervalAreCoalescedIntoTheNewest() {
        var throttle = Throttle(minimumInterval: .seconds(10))
        #expect(throttle.advertChanged([1], at: t0) == .publish([1]))
        #expect(throttle.advertChanged([1], at: t0 + .seconds(1)) == .none)
        #expect(throttle.advertChanged([2], at: t0 + .seconds(4)) == .scheduleFlush(after: .seconds(6)))
        #expect(throttle.advertChanged([3], at: t0 + .seconds(5)) == .none)
        #expect(throttle.flushTimerFired(at: t0 + .seconds(10)) == .publish([3]))
        #expect(throttle.advertChanged([4], at: t0 + .seconds(20)) == .publish([4]))
    }

    @Test func anAdvertBackToThePublishedOneLeavesNothingToFlush() {
        var throttle = Throttle(minimumInterval: .seconds(10))
        _ = throttle.advertChanged([1], at: t0)
        _ = throttle.advertChanged([2], at: t0 + .seconds(1))
        #expect(throttle.advertChanged([1], at: t0 + .seconds(2)) == .none)
        #expect(throttle.flushTimerFired(at: t0 + .seconds(10)) == .none)
    }
}
