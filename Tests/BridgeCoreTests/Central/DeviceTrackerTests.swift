import BridgeCore
import Testing

/// Tracking slots under advertisers that fake a `match:` rule.
@Suite struct DeviceTrackerTests {
    typealias Tracker = DeviceTracker<String, ContinuousClock.Instant>
    let t0 = ContinuousClock.now

    @Test func fakesCannotTakeTheSlotOfADeviceConfiguredByAddress() {
        var tracker = Tracker(matchedCapacity: 2, unheardTimeout: .seconds(600), evictableAfter: .seconds(60))
        #expect(tracker.heard("fake1", byAddress: false, at: t0) == .tracked)
        #expect(tracker.heard("fake2", byAddress: false, at: t0) == .tracked)
        #expect(tracker.heard("fake3", byAddress: false, at: t0) == .refused)
        #expect(tracker.heard("lock", byAddress: true, at: t0) == .tracked)
    }

    @Test func aNewcomerTakesTheSlotOfTheMatchedDeviceSilentLongest() {
        var tracker = Tracker(matchedCapacity: 2, unheardTimeout: .seconds(600), evictableAfter: .seconds(60))
        _ = tracker.heard("old", byAddress: false, at: t0)
        _ = tracker.heard("recent", byAddress: false, at: t0 + .seconds(50))
        #expect(tracker.heard("new", byAddress: false, at: t0 + .seconds(59)) == .refused)
        #expect(tracker.heard("new", byAddress: false, at: t0 + .seconds(60)) == .trackedEvicting("old"))
        #expect(!tracker.isTracked("old") && tracker.isTracked("new") && tracker.count == 2)
    }

    @Test func matchedDevicesUnheardForTheTimeoutAreLetGoButAddressedOnesStay() {
        var tracker = Tracker(matchedCapacity: 4, unheardTimeout: .seconds(600), evictableAfter: .seconds(60))
        _ = tracker.heard("matched", byAddress: false, at: t0)
        _ = tracker.heard("lock", byAddress: true, at: t0)
        _ = tracker.heard("heard", byAddress: false, at: t0)
        #expect(tracker.heard("heard", byAddress: false, at: t0 + .seconds(300)) == .alreadyTracked)
        #expect(tracker.expireUnheard(at: t0 + .seconds(600)) == ["matched"])
        #expect(tracker.isTracked("lock") && tracker.isTracked("heard"))
        // The freed slot is usable again.
        for index in 0..<3 { #expect(tracker.heard("n\(index)", byAddress: false, at: t0 + .seconds(601)) == .tracked) }
        // Full again: the one silent for over a minute makes room, then newcomers heard together are refused.
        #expect(tracker.heard("n3", byAddress: false, at: t0 + .seconds(601)) == .trackedEvicting("heard"))
        #expect(tracker.heard("n4", byAddress: false, at: t0 + .seconds(601)) == .refused)
    }
}
