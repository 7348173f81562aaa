/// An actor whose executor is a `PollLoop`.
///
/// Public, as is `PollLoop`, only so that `loopIsolated` can be public and inlined: Swift 6.3.1 does not specialize a
/// `package` inlinable function in the package's other modules, and the generic copy allocated twice per call (the
/// closure boxed for `withoutActuallyEscaping`, and a thunk to pass it generically) on every D-Bus message and
/// MQTT publish.
public protocol LoopActor: Actor {
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
    @inlinable @inline(__always)
    public nonisolated func loopIsolated<Result>(_ operation: (isolated Self) throws -> Result) rethrows -> Result {
        // `operation` travels as the argument, inside a struct: a bare function passed as a generic argument is
        // converted to the generic representation of a function, a thunk allocated on every call.
        try withoutActuallyEscaping(operation) { operation in
            try loopIsolated(with: PlainOperation(run: operation)) { actor, operation in try operation.run(actor) }
        }
    }

    /// `loopIsolated` for the per-message callbacks: `operation` gets `argument` as a parameter and so captures
    /// nothing, and a closure with no captures needs no heap context where one that captures would allocate one on
    /// every call.
    @inlinable @inline(__always)
    public nonisolated func loopIsolated<Argument, Result>(
        with argument: Argument, _ operation: (isolated Self, Argument) throws -> Result
    ) rethrows -> Result {
        loop.checkIsolated()
        return try withoutActuallyEscaping(operation) { operation in
            // The isolated parameter changes nothing in how the function is called, only who may call it. The cast
            // goes through a struct: a function handed to `unsafeBitCast` itself is first converted to the generic
            // representation of a function, a thunk allocated on every call.
            let unchecked = unsafeBitCast(
                IsolatedOperation(run: operation),
                to: UncheckedOperation<Self, Argument, Result>.self)
            return try unchecked.run(self, argument)
        }
    }
}

@usableFromInline
struct IsolatedOperation<Actor: LoopActor, Argument, Result> {
    @usableFromInline let run: (isolated Actor, Argument) throws -> Result
    @inlinable init(run: @escaping (isolated Actor, Argument) throws -> Result) { self.run = run }
}

@usableFromInline
struct PlainOperation<Actor: LoopActor, Result> {
    @usableFromInline let run: (isolated Actor) throws -> Result
    @inlinable init(run: @escaping (isolated Actor) throws -> Result) { self.run = run }
}

@usableFromInline
struct UncheckedOperation<Actor: LoopActor, Argument, Result> {
    @usableFromInline let run: (Actor, Argument) throws -> Result
}
