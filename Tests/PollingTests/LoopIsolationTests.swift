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
    }

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
}
