import Synchronization

/// A clock that moves only when the test says so: `advance(by:)` wakes every sleeper whose deadline it passes.
///
/// Tests that drive timeouts, backoff and throttles use it so that they never sleep; `waitForSleepers(count:)`
/// lets a test wait until the code under test has started the sleeps it is about to cut short.
package final class ManualClock: Clock, Sendable {
    package struct Instant: InstantProtocol, CustomStringConvertible {
        /// Time since the clock was created.
        package var offset: Duration

        package func advanced(by duration: Duration) -> Instant { Instant(offset: offset + duration) }
        package func duration(to other: Instant) -> Duration { other.offset - offset }
        package static func < (lhs: Instant, rhs: Instant) -> Bool { lhs.offset < rhs.offset }
        package var description: String { "\(offset)" }
    }

    private struct Sleeper {
        let deadline: Instant
        let continuation: CheckedContinuation<Void, any Error>
    }

    private struct State {
        var now = Instant(offset: .zero)
        var sleepers: [UInt64: Sleeper] = [:]
        var nextID: UInt64 = 0
        var sleeperWaiters: [(count: Int, continuation: CheckedContinuation<Bool, Never>)] = []
    }

    private let state = Mutex(State())

    package init() {}

    package var now: Instant { state.withLock { $0.now } }
    package var minimumResolution: Duration { .zero }

    /// How many tasks are sleeping on this clock now.
    package var sleeperCount: Int { state.withLock { $0.sleepers.count } }

    package func sleep(until deadline: Instant, tolerance: Duration? = nil) async throws {
        let id = state.withLock { state in
            state.nextID += 1
            return state.nextID
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                state.withLock { state in
                    if Task.isCancelled {
                        continuation.resume(throwing: CancellationError())
                    } else if deadline <= state.now {
                        continuation.resume()
                    } else {
                        state.sleepers[id] = Sleeper(deadline: deadline, continuation: continuation)
                        let count = state.sleepers.count
                        state.sleeperWaiters.removeAll { waiter in
                            guard waiter.count <= count else { return false }
                            waiter.continuation.resume(returning: true)
                            return true
                        }
                    }
                }
            }
        } onCancel: {
            state.withLock { $0.sleepers.removeValue(forKey: id) }?.continuation.resume(throwing: CancellationError())
        }
    }

    /// Moves the clock forward by `duration`, waking every sleeper whose deadline is reached.
    package func advance(by duration: Duration) {
        let due: [Sleeper] = state.withLock { state in
            state.now = state.now.advanced(by: duration)
            let now = state.now
            let due = state.sleepers.filter { $0.value.deadline <= now }
            for id in due.keys { state.sleepers[id] = nil }
            return due.values.sorted { $0.deadline < $1.deadline }
        }
        for sleeper in due { sleeper.continuation.resume() }
    }

    /// Waits until at least `count` tasks sleep on this clock (at most `timeout` of real time).
    ///
    /// - Throws: `ManualClock.Timeout` when they do not in time.
    package func waitForSleepers(count: Int, timeout: Duration = .seconds(30)) async throws {
        let reached = await withDeadline(timeout) {
            await withCheckedContinuation { continuation in
                self.state.withLock { state in
                    if state.sleepers.count >= count {
                        continuation.resume(returning: true)
                    } else {
                        state.sleeperWaiters.append((count, continuation))
                    }
                }
            }
        } onTimeout: {
            let waiters = self.state.withLock { state in
                defer { state.sleeperWaiters.removeAll { $0.count == count } }
                return state.sleeperWaiters.filter { $0.count == count }
            }
            for waiter in waiters { waiter.continuation.resume(returning: false) }
        }
        guard reached else { throw Timeout(count: count, after: timeout) }
    }

    /// Fewer sleepers than expected before the deadline.
    package struct Timeout: Error, CustomStringConvertible {
        package let count: Int
        package let after: Duration
        package var description: String { "fewer than \(count) sleepers on the manual clock within \(after)" }
    }
}
