import BluetoothCore
import Glibc
import Polling
import Synchronization

/// Gattway's end of an AcquireNotify socket pair: one SEQPACKET datagram per notification.
///
/// Sends never block: EAGAIN means bluetoothd's side is full, and the write interest (on only then) reports when
/// it is writable again. bluetoothd writes 0x01 back when the central confirms an indication, and closes its end
/// when the CCC is disabled or the central leaves. The socket is watched on the bus connection's loop, where the
/// peripheral's MQTT client delivers its values too, so a value sent from there and the link's events cost no
/// thread of their own: the handler is told on the loop and hands the event to the subscriber.
///
/// The watch's handlers hold the link strongly (a weak reference would put every retain and release of it, a few per
/// value, on the runtime's slow path); `close()`, or bluetoothd closing its end, cancels the watch and lets it go.
final class BlueZNotificationLink: GATTNotificationLink {
    let device: String?
    let maximumValueLength: Int
    private let fd: Int32
    private let loop: PollLoop
    private let state = Mutex(State())

    private struct State: Sendable {
        var handler: (@Sendable (GATTNotificationLinkEvent) -> Void)?
        /// The loop's watch of the socket (on a `dup()` of its own), once set up on the loop.
        var watch: FileWatch?
        /// A send found the link full: writability is watched until it is reported.
        var writeArmed = false
        var closed = false
    }

    /// Takes ownership of `fd`. `mtu` is the ATT MTU: a notification carries at most MTU−3 bytes.
    init(fd: Int32, mtu: Int, device: String?, loop: PollLoop) {
        self.fd = fd
        self.device = device
        self.loop = loop
        maximumValueLength = max(1, min(mtu - 3, 512))
    }

    func start(_ handler: @escaping @Sendable (GATTNotificationLinkEvent) -> Void) {
        let started = state.withLock { state -> Bool in
            guard !state.closed else { return false }
            state.handler = handler
            return true
        }
        guard started else { return }
        onLoop { [self] in self.startWatching() }
    }

    /// On the loop: watches the socket for bluetoothd's confirmations and its close (and writability if armed).
    private func startWatching() {
        let failed = state.withLock { state -> (@Sendable (GATTNotificationLinkEvent) -> Void)? in
            guard !state.closed, state.watch == nil else { return nil }
            do {
                let watch = try loop.watch(
                    fd, readable: { [self] in self.readable() }, writable: { [self] in self.writable() })
                watch.setInterest(read: true, write: state.writeArmed)
                state.watch = watch
                return nil
            } catch {
                // Out of descriptors: the link could not learn of confirmations or of its end, so it ends now.
                state.closed = true
                _ = Glibc.close(fd)
                defer { state.handler = nil }
                return state.handler
            }
        }
        failed?(.closed)
    }

    /// Sends under the lock: once the link is closed its descriptor number may belong to something else.
    func send(_ value: [UInt8]) -> GATTLinkSendResult {
        let length = min(value.count, maximumValueLength)
        let result = state.withLock { state -> GATTLinkSendResult in
            guard !state.closed else { return .closed }
            while true {
                let sent = value.withUnsafeBytes {
                    Glibc.send(fd, $0.baseAddress, length, Int32(MSG_DONTWAIT | MSG_NOSIGNAL))
                }
                if sent >= 0 { return .sent }
                switch errno {
                case EINTR: continue
                case EAGAIN, EWOULDBLOCK: return .full
                default: return .closed
                }
            }
        }
        if result == .full { onLoop { [self] in self.armWrites() } }
        return result
    }

    /// On the loop: watch writability until the link reports it.
    private func armWrites() {
        state.withLock { state in
            guard !state.closed, !state.writeArmed else { return }
            state.writeArmed = true
            state.watch?.setInterest(read: true, write: true)
        }
    }

    private func writable() {
        let handler = state.withLock { state -> (@Sendable (GATTNotificationLinkEvent) -> Void)? in
            guard state.writeArmed, !state.closed else { return nil }
            state.writeArmed = false
            state.watch?.setInterest(read: true, write: false)
            return state.handler
        }
        handler?(.writable)
    }

    /// bluetoothd writes 0x01 when the remote confirms an indication; EOF means it let go of the socket.
    private func readable() {
        guard let watchFD = state.withLock({ $0.watch?.fileDescriptor }) else { return }
        var byte: UInt8 = 0
        let count = recv(watchFD, &byte, 1, Int32(MSG_DONTWAIT))
        if count == 0 || (count < 0 && errno != EAGAIN && errno != EINTR) {
            let handler = state.withLock { $0.handler }
            if shutDown() { handler?(.closed) }
            return
        }
        if count == 1 && byte == 0x01 { state.withLock { $0.handler }?(.confirmed) }
    }

    func close() { _ = shutDown() }

    /// Closes the descriptor and, on the loop, the watch (bluetoothd sees the link closed once both are). True the
    /// first time.
    private func shutDown() -> Bool {
        let watch = state.withLock { state -> FileWatch?? in
            guard !state.closed else { return .none }
            state.closed = true
            state.handler = nil
            _ = Glibc.close(fd)
            defer { state.watch = nil }
            return .some(state.watch)
        }
        guard let watch else { return false }
        if let watch { onLoop { watch.cancel() } }
        return true
    }

    /// Runs `work` on the loop: at once when already there (the hot path), else queued.
    private func onLoop(_ work: @escaping @Sendable () -> Void) {
        if loop.inLoop { work() } else { loop.execute(work) }
    }
}
