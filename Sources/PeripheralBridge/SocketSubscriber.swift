import Dispatch
import Glibc
import Synchronization

/// A central's AcquireNotify socket: one SEQPACKET datagram per notification.
///
/// Values wait in a bounded ``NotifyQueue``. Sending is non-blocking: EAGAIN means bluetoothd's side is full
/// ("not ready"), and a write source reports when the socket is writable again ("ready"), at which point the
/// queue is flushed and the channel told that there is room. An indication holds the queue until the remote
/// confirms it (0x01 read back from the socket, or a Confirm() call), or until `confirmTimeout`.
final class SocketSubscriber: NotifySubscriber {
    let id: Int
    let device: String?
    private let fd: Int32
    private let payloadLimit: Int
    private let indicate: Bool
    private let queue: DispatchQueue
    private let sources: Sources
    private let state: Mutex<State>
    private let onRoom: @Sendable () -> Void
    private let onClose: @Sendable (Int) -> Void
    static let confirmTimeout: DispatchTimeInterval = .seconds(30)

    private struct State: Sendable {
        var queue: NotifyQueue
        /// The write source runs (it is inactive until the first EAGAIN, then suspended while not needed).
        var writeArmed = false
        var writeActivated = false
        var awaitingConfirm = false
        var confirmGeneration = 0
        var closed = false
        var counters = SubscriberCounters()
    }

    /// Dispatch sources are thread-safe for resume/suspend/cancel; this box only carries them across.
    private final class Sources: @unchecked Sendable {
        var read: (any DispatchSourceRead)?
        var write: (any DispatchSourceWrite)?
    }

    /// Takes ownership of `fd` (the local end of the pair). `mtu` is the ATT MTU: a notification carries at most
    /// MTU−3 bytes.
    init(
        id: Int, fd: Int32, mtu: Int, device: String?, indicate: Bool, capacity: Int,
        policy: NotifyQueue.Policy, onRoom: @escaping @Sendable () -> Void,
        onClose: @escaping @Sendable (Int) -> Void
    ) {
        self.id = id
        self.fd = fd
        self.device = device
        self.indicate = indicate
        payloadLimit = max(1, min(mtu - 3, 512))
        self.onRoom = onRoom
        self.onClose = onClose
        queue = DispatchQueue(label: "gattway.peripheral.notify.\(fd)")
        state = Mutex(State(queue: NotifyQueue(capacity: capacity, policy: policy)))
        sources = Sources()
        let read = DispatchSource.makeReadSource(fileDescriptor: fd, queue: queue)
        let write = DispatchSource.makeWriteSource(fileDescriptor: fd, queue: queue)
        sources.read = read
        sources.write = write
        read.setEventHandler { [weak self] in self?.readable() }
        write.setEventHandler { [weak self] in self?.writable() }
        // The write source starts suspended (never activated until the first EAGAIN).
        read.activate()
    }

    var hasRoom: Bool { state.withLock { $0.closed || $0.queue.hasRoom } }
    var isClosed: Bool { state.withLock { $0.closed } }
    var counters: SubscriberCounters {
        state.withLock { var c = $0.counters; c.queued = $0.queue.count; return c }
    }

    func offer(_ value: [UInt8]) -> NotifyQueue.Offer {
        let (offer, failed) = state.withLock { state -> (NotifyQueue.Offer, Bool) in
            if state.closed { return (.queued, false) }
            let offer = state.queue.offer(value)
            return (offer, pump(&state))
        }
        // Called under the channel's lock: closing (which calls back into the channel) must happen later.
        if failed { queue.async { [weak self] in self?.close() } }
        return offer
    }

    /// Sends what is queued until the socket is full or an indication awaits its confirmation. Returns true
    /// when the socket failed (peer gone). Runs under the lock; every call is non-blocking.
    private func pump(_ state: inout State) -> Bool {
        while !state.awaitingConfirm, let value = state.queue.first {
            let length = min(value.count, payloadLimit)
            let sent = value.withUnsafeBytes { send(fd, $0.baseAddress, length, Int32(MSG_DONTWAIT | MSG_NOSIGNAL)) }
            if sent < 0 {
                if errno == EAGAIN || errno == EWOULDBLOCK {
                    if !state.writeArmed, let write = sources.write {
                        state.writeArmed = true
                        if state.writeActivated { write.resume() } else { state.writeActivated = true; write.activate() }
                    }
                    return false
                }
                if errno == EINTR { continue }
                return true
            }
            state.queue.removeFirst()
            if length < value.count { state.counters.truncated += 1 }
            if indicate {
                state.counters.indications += 1
                state.awaitingConfirm = true
                state.confirmGeneration += 1
                let generation = state.confirmGeneration
                queue.asyncAfter(deadline: .now() + Self.confirmTimeout) { [weak self] in
                    self?.confirmTimedOut(generation)
                }
            } else {
                state.counters.notifications += 1
            }
        }
        return false
    }

    private func writable() {
        let (failed, room) = state.withLock { state -> (Bool, Bool) in
            if state.writeArmed {
                state.writeArmed = false
                sources.write?.suspend()
            }
            let hadRoom = state.queue.hasRoom
            let failed = pump(&state)
            return (failed, !hadRoom && state.queue.hasRoom || state.queue.isEmpty)
        }
        if failed { close() } else if room { onRoom() }
    }

    /// bluetoothd writes 0x01 when the remote confirms an indication; EOF means it let go of the socket.
    private func readable() {
        var byte: UInt8 = 0
        let count = recv(fd, &byte, 1, Int32(MSG_DONTWAIT))
        if count == 0 || (count < 0 && errno != EAGAIN && errno != EINTR) {
            close()
            return
        }
        if count == 1 && byte == 0x01 { confirmed() }
    }

    func confirmed() {
        let failed = state.withLock { state -> Bool in
            guard state.awaitingConfirm else { return false }
            state.awaitingConfirm = false
            return pump(&state)
        }
        if failed { close() } else { onRoom() }
    }

    private func confirmTimedOut(_ generation: Int) {
        let stale = state.withLock { $0.awaitingConfirm && $0.confirmGeneration == generation }
        if stale { confirmed() }
    }

    func close() {
        let wasOpen = state.withLock { state -> Bool in
            guard !state.closed else { return false }
            state.closed = true
            state.queue.removeAll()
            if let write = sources.write {
                // Releasing a suspended or inactive source is an error in libdispatch: make it run, then cancel.
                if !state.writeArmed {
                    if state.writeActivated { write.resume() } else { write.activate() }
                    state.writeArmed = true
                }
                write.cancel()
            }
            return true
        }
        guard wasOpen else { return }
        let fd = self.fd
        if let read = sources.read {
            read.setCancelHandler { Glibc.close(fd) }
            read.cancel()
        }
        onClose(id)
        onRoom()
    }
}
