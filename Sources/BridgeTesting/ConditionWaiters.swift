import Synchronization

/// Lets a test await a condition over a fake's state: `changed()` after every change re-checks every waiter.
final class ConditionWaiters: Sendable {
    private struct Waiter {
        let condition: @Sendable () -> Bool
        let continuation: CheckedContinuation<Bool, Never>
    }

    private let waiters = Mutex<[UInt64: Waiter]>([:])
    private let nextID = Atomic<UInt64>(0)

    /// True once `condition` holds, false when it did not within `timeout` (real time).
    func wait(timeout: Duration, until condition: @escaping @Sendable () -> Bool) async -> Bool {
        let id = nextID.wrappingAdd(1, ordering: .relaxed).newValue
        return await withDeadline(timeout) {
            await withCheckedContinuation { continuation in
                self.waiters.withLock { $0[id] = Waiter(condition: condition, continuation: continuation) }
                self.changed()
            }
        } onTimeout: {
            self.waiters.withLock { $0.removeValue(forKey: id) }?.continuation.resume(returning: false)
        }
    }

    func changed() {
        let candidates = waiters.withLock { $0 }
        for (id, waiter) in candidates where waiter.condition() {
            waiters.withLock { $0.removeValue(forKey: id) }?.continuation.resume(returning: true)
        }
    }
}

/// A condition a test awaited did not hold in time.
package struct ConditionTimeout: Error, CustomStringConvertible {
    package let what: String

    package init(what: String) {
        self.what = what
    }

    package var description: String { "\(what) did not happen in time" }
}
