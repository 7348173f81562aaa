import CDBus
import Glibc
import Polling

/// Reading the bus in batches while only signals that can wait arrive (see `DBusConnection.paceReading`).
///
/// Each wake-up costs far more than the message it brings when messages arrive one at a time: the loop's code and
/// libdbus's find their caches cold every time. Advertisement reports tolerate a few milliseconds; replies,
/// incoming calls and characteristic values do not, so any of those ends the batching for `quietPeriod`.
///
/// Times are `MonotonicTime` nanoseconds, read once per wake-up: a notification stream's every wake-up accounts here.
struct ReadPacing {
    /// How long reading pauses once the socket is drained, in nanoseconds; nil: never.
    var interval: UInt64?
    /// How long after the last message that could not wait reading may pause again, in nanoseconds.
    var quietPeriod: UInt64 = 100_000_000
    /// A message that could not wait was dispatched since the last wake-up was accounted.
    var sawUrgent = false
    var lastUrgent: UInt64 = 0
    /// Set while reading is paused; ends the pause when it fires.
    var resumeTimer: LoopTimer?
    /// When a wake-up last read the socket, and when a pause last ran out: a message within `interval` of either
    /// says messages come closer together than a pause lasts, so that one would gather several. Otherwise a pause
    /// would only add the wake-up of its own end.
    var lastRead: UInt64 = 0
    var lastPauseEnd: UInt64 = 0

    /// Set while the end of a pause reads what it gathered (see `endPause`): the loop need not watch the socket yet.
    var endingPause = false

    var isPaused: Bool { resumeTimer != nil }
}

/// The socket a paced read drains: libdbus's, read through its watch, or the bus's, read by the relay.
enum ReadSource {
    case libdbus(key: UInt, watch: OpaquePointer)
    case relay
}

extension DBusConnection {
    /// Paces reading the bus: once a wake-up has drained the socket, messages came less than `interval` apart,
    /// and for `quietPeriod` no call of this connection was waiting for its reply and every message was a signal
    /// first matched by a tap made with `defersReading` (no incoming call, no other signal), reading pauses for
    /// `interval`, so that what arrives meanwhile is read and dispatched in one wake-up. Messages further apart are
    /// read as they come: a pause would gather nothing and add a wake-up. Sending a call ends a pause at once. nil
    /// turns pacing off.
    ///
    /// Writing is never paused, nor are the connection's timeouts.
    package func paceReading(every interval: Duration?, quietPeriod: Duration = .milliseconds(100)) {
        precondition(interval.map { $0 > .zero } ?? true, "paceReading: the interval must be positive")
        pacing.interval = interval.map(MonotonicTime.nanoseconds)
        pacing.quietPeriod = MonotonicTime.nanoseconds(quietPeriod)
        pacing.lastUrgent = MonotonicTime.now()
        if interval == nil { resumeReading() }
    }

    /// How many times reading paused (see `paceReading`).
    package nonisolated var readPauseCount: Int { readPauses.value }

    /// A message that cannot wait was dispatched.
    func noteUrgentMessage() {
        pacing.sawUrgent = true
    }

    /// A call went out: its reply is read as soon as it comes.
    func noteCallSent() {
        pacing.lastUrgent = MonotonicTime.now()
        resumeReading()
    }

    /// After a wake-up (or the end of a pause, `endPause`) read the socket behind watch `key` once, with pacing on:
    /// when reading may pause (only deferrable signals came, no call awaits its reply, nothing urgent for
    /// `quietPeriod`, messages close together), reads on until the socket is drained, then pauses. libdbus takes
    /// about 2 KiB a read: reading on dispatches the reports gathered during a pause in one turn, so what they publish
    /// leaves together (the MQTT client coalesces the writes of one turn), and the loop does not go round once per
    /// 2 KiB.
    func readBatch(_ source: ReadSource) {
        guard let interval = pacing.interval, !pacing.isPaused else { return }
        // Each time below was read from the same monotonic clock before `now`.
        let now = MonotonicTime.now()
        let dense = now - max(pacing.lastRead, pacing.lastPauseEnd) < interval
        pacing.lastRead = now
        guard !takeUrgent(now), dense, pendingCalls.isEmpty, now - pacing.lastUrgent >= pacing.quietPeriod,
            readUntilDrained(source),
            !takeUrgent(now), pendingCalls.isEmpty
        else { return }
        pacing.resumeTimer = loop.schedule(after: .nanoseconds(Int64(interval))) { [weak self] in
            self?.loopIsolated { $0.endPause() }
        }
        readPauses.increment()
        refreshWatches()
    }

    /// Whether a message that could not wait was dispatched since the last look; it starts a new quiet period.
    private func takeUrgent(_ now: UInt64) -> Bool {
        guard pacing.sawUrgent else { return false }
        pacing.sawUrgent = false
        pacing.lastUrgent = now
        return true
    }

    /// Reads until the socket holds nothing, at most `maximumReadsPerWake` times in all; false when it still holds
    /// something (or the connection or the watch has gone).
    private func readUntilDrained(_ source: ReadSource) -> Bool {
        switch source {
        case .libdbus(let key, let watch):
            for _ in 1..<Self.maximumReadsPerWake {
                guard handle != nil, let fileWatch = watches[key] else { return false }
                if Self.isDrained(fileWatch.fileDescriptor) { return true }
                // libdbus disables its read watch while its queue of received messages is full: then it must not
                // read.
                guard dbus_watch_get_enabled(watch) != 0 else { return false }
                readAgain(watch)
            }
        case .relay:
            // The relay reads 64 KiB at a time.
            for _ in 1..<Self.maximumReadsPerWake / 8 {
                guard handle != nil, let bus = relay?.bus.fileDescriptor else { return false }
                if Self.isDrained(bus) { return true }
                relayReadOnce()
            }
        }
        return false
    }

    /// Reads per wake-up at most: 64 reads by libdbus are about 128 KiB, some 300 reports.
    private static let maximumReadsPerWake = 64

    /// A pause ran out. Behind the relay, what it gathered is read at once: letting the loop watch the socket again
    /// first cost an `epoll_ctl` to add it, an `epoll_wait` that returns at once, and another `epoll_ctl` to remove
    /// it when the next pause began, for every batch. The loop watches the socket again only when reading does not
    /// pause again (nothing came, or something that cannot wait).
    private func endPause() {
        pacing.lastPauseEnd = MonotonicTime.now()
        guard handle != nil, let timer = pacing.resumeTimer else { return }
        // While libdbus has not taken what the relay handed it, the bus is not read (see `refreshRelayInterest`).
        if let pending = relay?.toLibdbus.count, pending < DBusWireRelay.maxPendingToLibdbus {
            timer.cancel()
            pacing.resumeTimer = nil
            loop.expectBurst()
            pacing.endingPause = true
            if relayReadOnce(), handle != nil, relay != nil, pacing.interval != nil { readBatch(.relay) }
            pacing.endingPause = false
            if !pacing.isPaused { refreshWatches() }
            return
        }
        resumeReading()
    }

    func resumeReading() {
        guard handle != nil, let timer = pacing.resumeTimer else { return }
        timer.cancel()
        pacing.resumeTimer = nil
        refreshWatches()
    }

    /// Whether the socket has nothing left to read now. A socket at its end (or failing) is not drained: libdbus
    /// must read that too.
    static func isDrained(_ socket: Int32) -> Bool {
        var byte: UInt8 = 0
        let peeked = recv(socket, &byte, 1, Int32(MSG_PEEK) | Int32(MSG_DONTWAIT))
        return peeked < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)
    }
}
