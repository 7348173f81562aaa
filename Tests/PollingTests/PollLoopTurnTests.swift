import Polling
import Synchronization
import TestWorld
import Testing

/// `atTurnEnd`, `currentTurn` and `expectBurst`: what the MQTT client uses to hold a turn's publishes back until the
/// turn ends.
@Suite(.timeLimit(.minutes(1)))
struct PollLoopTurnTests {
    private struct Step: Equatable, Sendable {
        let name: String
        let turn: UInt64
    }

    @Test func turnEndWorkRunsOnceAfterTheTurnsOtherWorkAndBeforeTheNextTurn() async throws {
        let loop = try PollLoop(name: "test.turnend")
        let steps = Mutex<[Step]>([])
        let record: @Sendable (String) -> Void = { name in
            steps.withLock { $0.append(Step(name: name, turn: loop.currentTurn)) }
        }
        try await withDeadline(.seconds(10), "the next turn's work") {
            await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
                loop.execute {
                    loop.atTurnEnd { record("end") }
                    loop.execute {
                        record("next turn")
                        done.resume()
                    }
                    record("work")
                }
            }
        }
        let recorded = steps.withLock { $0 }
        #expect(recorded.map(\.name) == ["work", "end", "next turn"])
        try #require(recorded.count == 3)
        #expect(recorded[0].turn == recorded[1].turn, "the end of the turn belongs to the turn")
        #expect(recorded[2].turn > recorded[1].turn)
    }

    @Test func turnEndWorkAddedAtTheEndOfATurnRunsWithoutWaitingForAnEvent() async throws {
        let loop = try PollLoop(name: "test.turnend2")
        let turns = Mutex<[UInt64]>([])
        // Nothing else happens on this loop: a loop that slept with turn-end work pending would never run it.
        try await withDeadline(.seconds(10), "the second turn-end work") {
            await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
                loop.execute {
                    loop.atTurnEnd {
                        turns.withLock { $0.append(loop.currentTurn) }
                        loop.atTurnEnd {
                            turns.withLock { $0.append(loop.currentTurn) }
                            done.resume()
                        }
                    }
                }
            }
        }
        let recorded = turns.withLock { $0 }
        try #require(recorded.count == 2)
        #expect(recorded[1] == recorded[0] + 1)
    }

    @Test func aBurstIsExpectedOnlyInTheTurnThatAnnouncedIt() async throws {
        let loop = try PollLoop(name: "test.burst")
        let seen = Mutex<[Bool]>([])
        let record: @Sendable () -> Void = { seen.withLock { $0.append(loop.expectsBurst) } }
        try await withDeadline(.seconds(10), "the turn after the burst") {
            await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
                loop.execute {
                    record()
                    loop.expectBurst()
                    record()
                    loop.atTurnEnd { record() }
                    loop.execute {
                        record()
                        done.resume()
                    }
                }
            }
        }
        #expect(seen.withLock { $0 } == [false, true, true, false])
    }
}
