/// Runs `operation`, failing with a clear error when it has not finished within `timeout`.
///
/// For waits on a stream that may never deliver: a test must fail, not hang, when what it waits for never comes.
/// The operation is cancelled on timeout, so it must end on cancellation (AsyncStream iteration does).
package func withDeadline<T: Sendable>(
    _ timeout: Duration, _ what: String, operation: @escaping @Sendable () async throws -> T
) async throws -> T {
    try await withThrowingTaskGroup(of: T?.self) { group in
        group.addTask { try await operation() }
        group.addTask {
            try await Task.sleep(for: timeout)  // the deadline, not a delay: the operation normally wins
            return nil
        }
        defer { group.cancelAll() }
        guard let result = try await group.next() ?? nil else {
            throw TestWorldError("\(what) did not happen within \(timeout)")
        }
        return result
    }
}
