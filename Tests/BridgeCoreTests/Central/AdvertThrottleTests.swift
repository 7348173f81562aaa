import BridgeCore
import Testing

@Suite struct AdvertThrottleTests {
    typealias Throttle = AdvertThrottle<ContinuousClock.Instant>
    let t0 = ContinuousClock.now

    @Test func changedAdvertsWithinTheIntervalAreCoalescedIntoTheNewest() {
        var throttle = Throttle(minimumInterval: .seconds(10))
        #expect(throttle.advertChanged(at: t0) == .makeAdvert)
        #expect(throttle.publish([1], at: t0) == [1])
        #expect(throttle.advertChanged(at: t0 + .seconds(4)) == .scheduleFlush(after: .seconds(6)))
        #expect(throttle.advertChanged(at: t0 + .seconds(5)) == .none)
        #expect(throttle.flushTimerFired() == true)
        #expect(throttle.publish([3], at: t0 + .seconds(10)) == [3])
        // The interval counts from the flush's publication.
        #expect(throttle.advertChanged(at: t0 + .seconds(15)) == .scheduleFlush(after: .seconds(5)))
        #expect(throttle.flushTimerFired() == true)
        #expect(throttle.publish([4], at: t0 + .seconds(20)) == [4])
        #expect(throttle.advertChanged(at: t0 + .seconds(31)) == .makeAdvert)
        #expect(throttle.publish([5], at: t0 + .seconds(31)) == [5])
    }

    @Test func anAdvertBackToThePublishedOneIsNotPublishedAgain() {
        var throttle = Throttle(minimumInterval: .seconds(10))
        _ = throttle.advertChanged(at: t0)
        #expect(throttle.publish([1], at: t0) == [1])
        #expect(throttle.advertChanged(at: t0 + .seconds(1)) == .scheduleFlush(after: .seconds(9)))
        #expect(throttle.flushTimerFired() == true)
        #expect(throttle.publish([1], at: t0 + .seconds(10)) == nil)
        // Nothing published at the flush, so the interval still counts from t0: a change may go out at once.
        #expect(throttle.advertChanged(at: t0 + .seconds(11)) == .makeAdvert)
        #expect(throttle.publish([1], at: t0 + .seconds(11)) == nil)
        #expect(throttle.publish([2], at: t0 + .seconds(12)) == [2])
    }

    @Test func aFlushWithNoChangeSinceThePublicationMakesNoAdvert() {
        var throttle = Throttle(minimumInterval: .seconds(10))
        _ = throttle.advertChanged(at: t0)
        _ = throttle.publish([1], at: t0)
        #expect(throttle.advertChanged(at: t0 + .seconds(2)) == .scheduleFlush(after: .seconds(8)))
        #expect(throttle.flushTimerFired() == true)
        _ = throttle.publish([2], at: t0 + .seconds(10))
        // A timer left from before (the flush already made the advert) finds nothing changed.
        #expect(throttle.flushTimerFired() == false)
    }

    @Test func theRoomOfTheAdvertBeforeComesBackToWriteTheNextInto() {
        var throttle = Throttle(minimumInterval: .zero)
        var payload: [UInt8] = [1, 1]
        #expect(throttle.publishIfNew(&payload, at: t0) == [1, 1])
        #expect(payload.isEmpty)
        payload = [2]
        #expect(throttle.publishIfNew(&payload, at: t0 + .seconds(1)) == [2])
        #expect(payload == [1, 1])
        // Unchanged: nothing published, and the caller keeps its room.
        payload = [2]
        #expect(throttle.publishIfNew(&payload, at: t0 + .seconds(2)) == nil)
        #expect(payload == [2])
    }
}

extension AdvertThrottle {
    /// `publishIfNew` with an advert made anew.
    fileprivate mutating func publish(_ advert: [UInt8], at now: Instant) -> [UInt8]? {
        var payload = advert
        return publishIfNew(&payload, at: now)
    }
}
