import CEpoll
import DequeModule
import Glibc
import Synchronization

/// The state of a `PollLoop`, shared by its handle and its thread.
///
/// `@unchecked Sendable`: `submitted` is guarded by its mutex and the thread id is atomic; everything else (watches,
/// timers) is only touched on the loop thread, which every entry point checks.
final class PollLoopCore: @unchecked Sendable {
    enum Work {
        case closure(@Sendable () -> Void)
        case job(UnownedJob, UnownedSerialExecutor)
    }

    private struct Submitted {
        var work: Deque<Work> = []
        /// The thread is in (or about to enter) `epoll_wait` and must be woken through the eventfd.
        var sleeping = false
        var stopRequested = false
    }

    let name: String
    let epoll: Int32
    private let wakeup: Int32
    private let submitted = Mutex(Submitted())
    private let thread = Atomic<UInt>(0)
    /// Set when the thread has ended: a watch or timer kept past it is cancelled already (or never fires again), and
    /// cancelling it is a no-op on any thread.
    private let ended = Atomic<Bool>(false)

    // Loop thread only.
    private var watches: [UInt64: FileWatch] = [:]
    /// The watch the last event was for: one socket is usually ready turn after turn, and comparing ids is
    /// cheaper than hashing one. Cleared when that watch is forgotten.
    private var lastWatch: FileWatch?
    private var timers = LoopTimerTable()
    private var nextID: UInt64 = 1
    /// Reused between turns so running the submitted work allocates nothing.
    private var running: Deque<Work> = []
    /// Counts the loop's turns, so a caller can tell whether two events fell in the same turn.
    private(set) var turn: UInt64 = 0
    /// The turn a handler said brings a burst of work (`PollLoop.expectBurst`).
    var burstTurn: UInt64?
    /// Run once at the end of the current turn (`PollLoop.atTurnEnd`), then forgotten.
    private var turnEnd: [@Sendable () -> Void] = []
    /// Swapped with `turnEnd` while its closures run, so that running them allocates nothing.
    private var turnEndRunning: [@Sendable () -> Void] = []

    /// The eventfd's id in epoll; watch and timer ids start above it.
    private static let wakeupID: UInt64 = 0

    init(name: String) throws(PollLoopError) {
        self.name = name
        epoll = epoll_create1(Int32(EPOLL_CLOEXEC))
        guard epoll >= 0 else { throw PollLoopError("epoll_create1") }
        wakeup = eventfd(0, Int32(EFD_CLOEXEC) | Int32(EFD_NONBLOCK))
        guard wakeup >= 0 else {
            let error = PollLoopError("eventfd")
            close(epoll)
            throw error
        }
        var event = epoll_event()
        event.events = EPOLLIN.rawValue
        event.data.u64 = Self.wakeupID
        guard epoll_ctl(epoll, EPOLL_CTL_ADD, wakeup, &event) == 0 else {
            let error = PollLoopError("epoll_ctl(eventfd)")
            close(wakeup)
            close(epoll)
            throw error
        }
    }

    deinit {
        close(wakeup)
        close(epoll)
    }

    func startThread() throws(PollLoopError) {
        var attributes = pthread_attr_t()
        pthread_attr_init(&attributes)
        defer { pthread_attr_destroy(&attributes) }
        pthread_attr_setdetachstate(&attributes, Int32(PTHREAD_CREATE_DETACHED))
        // The thread holds the core until it ends.
        let context = Unmanaged.passRetained(self).toOpaque()
        var id = pthread_t()
        let rc = pthread_create(
            &id, &attributes,
            { context in
                let core = Unmanaged<PollLoopCore>.fromOpaque(context!).takeRetainedValue()
                core.run()
                return nil
            }, context)
        guard rc == 0 else {
            Unmanaged<PollLoopCore>.fromOpaque(context).release()
            throw PollLoopError("pthread_create", errno: rc)
        }
    }

    var hasEnded: Bool { ended.load(ordering: .acquiring) }

    var isLoopThread: Bool { thread.load(ordering: .relaxed) == UInt(pthread_self()) }

    func checkLoopThread() {
        precondition(isLoopThread, "not on the loop thread of \(name)")
    }

    // MARK: Submitting work (any thread)

    func submit(_ work: Work) {
        let wake = submitted.withLock { state -> Bool in
            state.work.append(work)
            defer { state.sleeping = false }
            return state.sleeping
        }
        if wake { signalWakeup() }
    }

    func requestStop() {
        let wake = submitted.withLock { state -> Bool in
            state.stopRequested = true
            defer { state.sleeping = false }
            return state.sleeping
        }
        if wake { signalWakeup() }
    }

    private func signalWakeup() {
        var one: UInt64 = 1
        // Fails only when the counter is at its maximum, which means a wake-up is pending anyway.
        _ = write(wakeup, &one, MemoryLayout<UInt64>.size)
    }

    // MARK: The loop

    private func run() {
        thread.store(UInt(pthread_self()), ordering: .relaxed)
        // Linux allows 15 bytes; a longer name would be refused.
        let shortName = String(decoding: name.utf8.prefix(15), as: UTF8.self)
        _ = pthread_setname_np(pthread_self(), shortName)
        var events = [epoll_event](repeating: epoll_event(), count: 64)
        while true {
            turn &+= 1
            // One lock per busy turn: take what was submitted, and when there is nothing, say that the thread is
            // about to sleep so that the next submitter wakes it through the eventfd.
            let (stop, idle) = submitted.withLock { state -> (Bool, Bool) in
                swap(&running, &state.work)
                let idle = running.isEmpty
                state.sleeping = idle && !state.stopRequested
                return (state.stopRequested, idle)
            }
            if stop && idle { break }
            // Work submitted while this runs is taken next turn, after a look at the sockets that does not sleep.
            runSubmitted()
            let timeout = idle && turnEnd.isEmpty ? timers.timeoutMilliseconds(now: MonotonicTime.now()) : 0
            let count = events.withUnsafeMutableBufferPointer { buffer in
                epoll_wait(epoll, buffer.baseAddress, Int32(buffer.count), timeout)
            }
            // Awake again: submitters need not write the eventfd until the next sleep.
            if idle { submitted.withLock { $0.sleeping = false } }
            if count > 0 { handle(events[0..<Int(count)]) }
            fireDueTimers()
            if !turnEnd.isEmpty { runTurnEnd() }
        }
        if !turnEnd.isEmpty { runTurnEnd() }
        for watch in watches.values { watch.closeAtLoopEnd() }
        watches.removeAll()
        lastWatch = nil
        timers.removeAll()
        ended.store(true, ordering: .releasing)
    }

    func addTurnEnd(_ work: @escaping @Sendable () -> Void) {
        checkLoopThread()
        turnEnd.append(work)
    }

    private func runTurnEnd() {
        swap(&turnEnd, &turnEndRunning)
        for work in turnEndRunning { work() }
        turnEndRunning.removeAll(keepingCapacity: true)
    }

    private func runSubmitted() {
        while let work = running.popFirst() {
            switch work {
            case .closure(let closure): closure()
            case .job(let job, let executor): job.runSynchronously(on: executor)
            }
        }
    }

    private func handle(_ ready: ArraySlice<epoll_event>) {
        for event in ready {
            let id = event.data.u64
            if id == Self.wakeupID {
                var counter: UInt64 = 0
                _ = read(wakeup, &counter, MemoryLayout<UInt64>.size)
                continue
            }
            // A handler earlier in this turn may have cancelled this watch: then it is gone from the table.
            let watch: FileWatch
            if let last = lastWatch, last.id == id {
                watch = last
            } else if let found = watches[id] {
                watch = found
                lastWatch = found
            } else {
                continue
            }
            let flags = event.events
            let failed = flags & (EPOLLHUP.rawValue | EPOLLERR.rawValue) != 0
            if watch.wantsRead && (flags & EPOLLIN.rawValue != 0 || failed) {
                watch.readable()
            }
            if !watch.isCancelled && watch.wantsWrite && (flags & EPOLLOUT.rawValue != 0 || failed) {
                watch.writable()
            }
        }
    }

    // MARK: Watches (loop thread)

    func addWatch(
        _ fileDescriptor: Int32, readable: @escaping @Sendable () -> Void, writable: @escaping @Sendable () -> Void
    ) throws(PollLoopError) -> FileWatch {
        let own = fcntl(fileDescriptor, F_DUPFD_CLOEXEC, 0)
        guard own >= 0 else { throw PollLoopError("dup of socket \(fileDescriptor)") }
        let watch = FileWatch(id: takeID(), fileDescriptor: own, core: self, readable: readable, writable: writable)
        watches[watch.id] = watch
        return watch
    }

    func forgetWatch(_ id: UInt64) {
        watches[id] = nil
        if lastWatch?.id == id { lastWatch = nil }
    }

    // MARK: Timers (loop thread)

    func addTimer(after delay: Duration, repeating interval: Duration?, _ handler: @escaping @Sendable () -> Void)
        -> LoopTimer
    {
        checkLoopThread()
        let id = takeID()
        timers.add(id: id, after: delay, repeating: interval, now: MonotonicTime.now(), handler)
        return LoopTimer(id: id, core: self)
    }

    func cancelTimer(_ id: UInt64) {
        guard !hasEnded else { return }
        checkLoopThread()
        timers.cancel(id)
    }

    private func fireDueTimers() {
        guard !timers.isEmpty else { return }
        let now = MonotonicTime.now()
        while let handler = timers.popDue(now: now) { handler() }
    }

    private func takeID() -> UInt64 {
        defer { nextID += 1 }
        return nextID
    }
}
