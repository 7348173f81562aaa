import BridgeCore
import Testing

@Suite struct ScanSessionsTests {
    typealias Sessions = ScanSessions<ContinuousClock.Instant>
    let t0 = ContinuousClock.now

    @Test func scansAreCappedInNumberAndLength() {
        var sessions = Sessions(maximum: 2, longest: .seconds(300))
        #expect(sessions.start(duration: .seconds(10), at: t0) == .started(id: 1, endsAfter: .seconds(10)))
        #expect(sessions.start(duration: .seconds(3_600), at: t0) == .started(id: 2, endsAfter: .seconds(300)))
        #expect(sessions.start(duration: .seconds(10), at: t0) == .refused(running: 2))
        #expect(sessions.expired(at: t0 + .seconds(10)) == [1])
        #expect(sessions.start(duration: .seconds(10), at: t0) == .started(id: 3, endsAfter: .seconds(10)))
        #expect(sessions.ended(2) && !sessions.ended(2))
        #expect(sessions.count == 1)
    }
}
