import DequeModule

/// The commands (`/set`, `/get`, requests) of one device: one GATT operation in flight, a bounded queue, and a
/// deadline for each command from the moment it arrives. Pure: events in, actions out, time passed in.
///
/// A command that waits past its deadline (its device is away, or the one before it hangs) is answered with a
/// timeout instead of running late; one that finds the queue full is refused at once.
package struct DeviceCommandQueue<Command: Sendable, Instant: InstantProtocol>: Sendable
where Instant.Duration == Duration {
    package struct Entry: Sendable {
        package let command: Command
        package let deadline: Instant
    }

    package enum EnqueueAction: Sendable {
        /// Nothing was in flight: run this command now (it must finish by `deadline`).
        case start(Entry)
        /// Another command is in flight: this one waits its turn.
        case queued
        /// The queue is full (or the bridge stops): answer the command with this refusal.
        case refuse(Command, Refusal)
    }

    package enum Refusal: Sendable, Equatable {
        case busy(waiting: Int)
        case stopping
    }

    /// What to do when a command finished or the deadline timer fired.
    package struct Progress: Sendable {
        /// The command to run next, if any.
        package var start: Entry?
        /// Commands whose deadline passed while they waited: answer each with a timeout.
        package var expired: [Command] = []
    }

    package let capacity: Int
    package let commandTimeout: Duration
    private var waiting: Deque<Entry> = []
    package private(set) var inFlight: Entry?
    private var stopping = false

    package init(capacity: Int, commandTimeout: Duration) {
        precondition(capacity > 0, "a command queue needs room for one command")
        self.capacity = capacity
        self.commandTimeout = commandTimeout
    }

    package var waitingCount: Int { waiting.count }
    package var isIdle: Bool { inFlight == nil && waiting.isEmpty }

    /// The earliest deadline of a waiting command: when the runtime should call `deadlinePassed`.
    package var nextDeadline: Instant? { waiting.first?.deadline }

    package mutating func enqueue(_ command: Command, at now: Instant) -> EnqueueAction {
        guard !stopping else { return .refuse(command, .stopping) }
        let entry = Entry(command: command, deadline: now.advanced(by: commandTimeout))
        guard inFlight != nil else {
            inFlight = entry
            return .start(entry)
        }
        guard waiting.count < capacity else { return .refuse(command, .busy(waiting: waiting.count)) }
        waiting.append(entry)
        return .queued
    }

    /// The command in flight finished (either way).
    package mutating func finished(at now: Instant) -> Progress {
        inFlight = nil
        var progress = deadlinePassed(at: now)
        if !stopping, let next = waiting.popFirst() {
            inFlight = next
            progress.start = next
        }
        return progress
    }

    /// Takes out every waiting command whose deadline is at or before `now`.
    package mutating func deadlinePassed(at now: Instant) -> Progress {
        // Deadlines grow with arrival (one timeout for all), so the expired ones are a prefix.
        var progress = Progress()
        while let first = waiting.first, first.deadline <= now {
            progress.expired.append(first.command)
            waiting.removeFirst()
        }
        return progress
    }

    /// The bridge stops: waiting commands are handed back to be answered, new ones refused.
    package mutating func shutdown() -> [Command] {
        stopping = true
        defer { waiting.removeAll() }
        return waiting.map(\.command)
    }
}
