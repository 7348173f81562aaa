import BridgeCore
import Testing

@Suite struct BridgeClockTests {
    @Test func theDaemonsClockStartsAtZeroAndFollowsTheContinuousClock() async throws {
        let clock = BridgeClock.continuous
        let start = ContinuousClock.now
        let first = clock.now
        #expect(first.offset >= .zero)
        #expect(first.offset < .seconds(1))
        try await Task.sleep(for: .milliseconds(20))
        let later = clock.now
        // The bridge clock moved as much as the continuous clock did around it, give or take the reads between.
        let real = start.duration(to: .now)
        #expect(first.duration(to: later) >= .milliseconds(20))
        #expect(first.duration(to: later) <= real + .milliseconds(1))
    }

    @Test func theDaemonsClockSleepsUntilTheDeadline() async throws {
        let clock = BridgeClock.continuous
        let deadline = clock.now.advanced(by: .milliseconds(30))
        try await clock.sleep(until: deadline)
        #expect(clock.now >= deadline)
    }

    @Test func aSleepOnTheDaemonsClockEndsWhenItsTaskIsCancelled() async throws {
        let clock = BridgeClock.continuous
        let sleeper = Task { try await clock.sleep(until: clock.now.advanced(by: .seconds(60))) }
        sleeper.cancel()
        await #expect(throws: CancellationError.self) { try await sleeper.value }
    }
}
