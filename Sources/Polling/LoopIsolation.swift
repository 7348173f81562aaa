/// An actor whose executor is a `PollLoop`.
package protocol LoopActor: Actor {
    nonisolated var loop: PollLoop { get }
}

extension LoopActor {
    /// Runs `operation` isolated to the actor from its loop's thread: a socket or timer handler, or a C callback
    /// that libdbus or libmosquitto makes while the loop runs them.
    ///
    /// What `assumeIsolated` checks, for less: the standard one asks the concurrency runtime for the current task
    /// and executor (thread-local reads, then the executor's own check) on every call, and the hot path makes
    /// several such calls per value. Here the check is one comparison of thread ids; being on the loop's thread
    /// is what isolation to the actor means, as its jobs run nowhere else.
    @inlinable
    package nonisolated func loopIsolated<Result>(_ operation: (isolated Self) throws -> Result) rethrows -> Result {
        loop.checkIsolated()
        return try withoutActuallyEscaping(operation) { operation in
            // The isolated parameter changes nothing in how the function is called, only who may call it.
            let unchecked = unsafeBitCast(operation, to: ((Self) throws -> Result).self)
            return try unchecked(self)
        }
    }
}
