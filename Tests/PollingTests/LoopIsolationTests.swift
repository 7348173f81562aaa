import Polling
import Testing

/// `loopIsolated`: the cheap entry into an actor that runs on a `PollLoop`.
@Suite(.timeLimit(.minutes(1))) struct LoopIsolationTests {
    actor Counter: LoopActor {
        nonisolated let loop: PollLoop
        nonisolated var unownedExecutor: UnownedSerialExecutor { loop.asUnownedSerialExecutor() }
        var count = 0
        init(loop: PollLoop) { self.loop = loop }
        func increment() { count += 1 }
        func add(_ amount: Int) throws(Refused) -> Int {
            guard amount >= 0 else { throw Refused() }
            count += amount
            return count
        }
    }

    struct Refused: Error {}

    @Test func aHandlerOnTheLoopEntersTheActorAndItsChangesAreTheActors() async throws {
        let counter = Counter(loop: try PollLoop(name: "test.isolated"))
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            counter.loop.execute {
                for _ in 0..<3 { counter.loopIsolated { $0.increment() } }
                done.resume()
            }
        }
        await counter.increment()
        #expect(await counter.count == 4)
    }

    @Test func enteringFromAnotherThreadTraps() async throws {
        await #expect(processExitsWith: .failure) {
            let counter = Counter(loop: try PollLoop(name: "test.trap"))
            counter.loopIsolated { $0.increment() }
        }
    }

    /// The form the per-message callbacks use: the operation takes its input as an argument (so it captures
    /// nothing), returns the actor's answer, and passes the operation's error on.
    @Test func theArgumentFormPassesItsArgumentReturnsAndRethrows() async throws {
        let counter = Counter(loop: try PollLoop(name: "test.argument"))
        let (sums, refused) = await withCheckedContinuation { (done: CheckedContinuation<([Int], Bool), Never>) in
            counter.loop.execute {
                var sums: [Int] = []
                for amount in [2, 3] {
                    if let sum = try? counter.loopIsolated(with: amount, { try $0.add($1) }) { sums.append(sum) }
                }
                let refused = (try? counter.loopIsolated(with: -1) { try $0.add($1) }) == nil
                done.resume(returning: (sums, refused))
            }
        }
        #expect(sums == [2, 5])
        #expect(refused)
        #expect(await counter.count == 5)
    }

    @Test func theArgumentFormTrapsOffTheLoopToo() async throws {
        await #expect(processExitsWith: .failure) {
            let counter = Counter(loop: try PollLoop(name: "test.trap2"))
            _ = try? counter.loopIsolated(with: 1) { try $0.add($1) }
        }
    }
}
