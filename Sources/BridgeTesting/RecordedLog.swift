import Synchronization

/// An append-only record that tests can wait on: `first(since:where:timeout:)` returns the first entry at or after
/// a position that satisfies a condition, waiting for it up to a deadline. Used for what fakes saw happen.
package final class RecordedLog<Entry: Sendable>: Sendable {
    private struct Waiter {
        let since: Int
        let predicate: @Sendable (Entry) -> Bool
        let continuation: CheckedContinuation<Entry?, Never>
    }

    private struct State {
        var entries: [Entry] = []
        var waiters: [UInt64: Waiter] = [:]
        var nextID: UInt64 = 0
    }

    private let state = Mutex(State())

    package init() {}

    package var entries: [Entry] { state.withLock { $0.entries } }
    package var count: Int { state.withLock { $0.entries.count } }

    package func append(_ entry: Entry) {
        state.withLock { state in
            state.entries.append(entry)
            let index = state.entries.count - 1
            for (id, waiter) in state.waiters where waiter.since <= index && waiter.predicate(entry) {
                state.waiters[id] = nil
                waiter.continuation.resume(returning: entry)
            }
        }
    }

    /// The first entry at or after position `since` satisfying `predicate`, waiting up to `timeout` for it.
    package func first(
        since: Int = 0, timeout: Duration = .seconds(30), where predicate: @escaping @Sendable (Entry) -> Bool
    ) async throws -> Entry {
        let id = state.withLock { state in
            state.nextID += 1
            return state.nextID
        }
        let found: Entry? = await withDeadline(timeout) {
            await withCheckedContinuation { continuation in
                self.state.withLock { state in
                    if let hit = state.entries[min(since, state.entries.count)...].first(where: predicate) {
                        continuation.resume(returning: hit)
                    } else {
                        state.waiters[id] = Waiter(since: since, predicate: predicate, continuation: continuation)
                    }
                }
            }
        } onTimeout: {
            self.state.withLock { $0.waiters.removeValue(forKey: id) }?.continuation.resume(returning: nil)
        }
        guard let found else { throw RecordedLogTimeout(after: timeout) }
        return found
    }
}

/// Nothing matching was recorded before the deadline.
package struct RecordedLogTimeout: Error, CustomStringConvertible {
    package let after: Duration
    package var description: String { "nothing matching was recorded within \(after)" }
}
