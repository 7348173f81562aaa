import Glibc

/// One thread that waits on sockets with epoll, runs timers, and runs submitted work in order: the serial loop of
/// a D-Bus connection, of an MQTT client, or of both at once.
///
/// Why not DispatchSources: libdispatch turns every readable socket into up to three thread wake-ups (its event
/// thread, a worker for the queue, the event thread again to re-arm the source). A value that arrives on the
/// system bus and leaves on the broker socket then costs several context switches. On one `PollLoop` the same
/// value wakes one thread once: epoll returns, libdbus reads and dispatches, the signal tap publishes, and
/// libmosquitto writes, all in one turn.
///
/// It is an actor executor (`SerialExecutor`), so an actor whose `unownedExecutor` is the loop runs its jobs on
/// the loop thread and its socket and timer handlers can enter it with `loopIsolated` (`LoopActor`).
///
/// Lifetime: the thread runs until the last reference to the loop is gone (an actor running on the loop holds it,
/// and a queued job holds its actor, so no job can be stranded), then it closes what is still watched and ends.
public final class PollLoop: SerialExecutor, Sendable {
    let core: PollLoopCore

    /// Starts the loop's thread, named `name` (at most 15 bytes show in `ps -L`).
    package init(name: String) throws(PollLoopError) {
        core = try PollLoopCore(name: name)
        try core.startThread()
    }

    deinit {
        core.requestStop()
    }

    /// Runs `work` on the loop thread, after the work submitted before it. Callable from any thread; when called
    /// on the loop thread itself, `work` runs later in the same turn, never re-entrantly.
    package func execute(_ work: @escaping @Sendable () -> Void) {
        core.submit(.closure(work))
    }

    public func enqueue(_ job: consuming ExecutorJob) {
        core.submit(.job(UnownedJob(job), asUnownedSerialExecutor()))
    }

    /// Runs `work` once at the end of the current turn: after the submitted work, the ready sockets' handlers and
    /// the due timers of this turn, before the loop next waits. Work added by such work runs at the end of the next
    /// turn, which looks at the sockets without sleeping.
    ///
    /// - Precondition: called on the loop thread.
    package func atTurnEnd(_ work: @escaping @Sendable () -> Void) {
        core.addTurnEnd(work)
    }

    /// The number of the current turn (it wraps): equal in two calls only when both ran in the same turn.
    ///
    /// - Precondition: called on the loop thread.
    package var currentTurn: UInt64 {
        core.checkLoopThread()
        return core.turn
    }

    /// Says that the current turn brings a burst of work (a batch of messages gathered while reading paused, say):
    /// a writer that holds its output back until the turn ends (see `atTurnEnd`) may then do so from its first
    /// write, where it would otherwise wait to see several.
    ///
    /// - Precondition: called on the loop thread.
    package func expectBurst() {
        core.checkLoopThread()
        core.burstTurn = core.turn
    }

    /// Whether `expectBurst` was called in the current turn.
    ///
    /// - Precondition: called on the loop thread.
    package var expectsBurst: Bool {
        core.checkLoopThread()
        return core.burstTurn == core.turn
    }

    /// Whether the caller runs on this loop's thread.
    package var inLoop: Bool { core.isLoopThread }

    public func checkIsolated() {
        precondition(core.isLoopThread, "not on the loop thread of \(core.name)")
    }

    public func isIsolatingCurrentContext() -> Bool? { core.isLoopThread }

    /// Watches `fileDescriptor` for readability and writability (level-triggered), calling the handlers on the loop
    /// thread. The watch uses a `dup()` of the descriptor of its own, closed by `cancel()`: the owner of the socket
    /// (libdbus, libmosquitto) may close its number before it tells us, and a socket opened meanwhile with the same
    /// number must not meet our registration. Both interests start off; set them with `setInterest`.
    ///
    /// - Precondition: called on the loop thread.
    package func watch(
        _ fileDescriptor: Int32, readable: @escaping @Sendable () -> Void, writable: @escaping @Sendable () -> Void
    ) throws(PollLoopError) -> FileWatch {
        checkIsolated()
        return try core.addWatch(fileDescriptor, readable: readable, writable: writable)
    }

    /// Runs `handler` on the loop thread after `delay`, and then every `interval` when given, until cancelled.
    ///
    /// - Precondition: called on the loop thread.
    package func schedule(
        after delay: Duration, repeating interval: Duration? = nil, _ handler: @escaping @Sendable () -> Void
    ) -> LoopTimer {
        checkIsolated()
        return core.addTimer(after: delay, repeating: interval, handler)
    }

    /// Runs `handler` once after `delay`; callable from any thread. The handler may not be cancelled.
    package func execute(after delay: Duration, _ handler: @escaping @Sendable () -> Void) {
        if inLoop {
            _ = core.addTimer(after: delay, repeating: nil, handler)
        } else {
            execute { [core] in _ = core.addTimer(after: delay, repeating: nil, handler) }
        }
    }
}

/// Why a loop or a watch could not be set up.
package struct PollLoopError: Error, CustomStringConvertible {
    package let operation: String
    package let code: Int32

    init(_ operation: String, errno code: Int32 = errno) {
        self.operation = operation
        self.code = code
    }

    package var description: String { "\(operation) failed: \(String(cString: strerror(code)))" }
}
