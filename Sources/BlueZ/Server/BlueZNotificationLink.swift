import BluetoothCore
import Dispatch
import Glibc
import Synchronization

/// Gattway's end of an AcquireNotify socket pair: one SEQPACKET datagram per notification.
///
/// Sends never block: EAGAIN means bluetoothd's side is full, and a write source (armed only then) reports when it
/// is writable again. bluetoothd writes 0x01 back when the central confirms an indication, and closes its end when
/// the CCC is disabled or the central leaves. Every link's sources run on one shared queue: they only hand an
/// event to the peripheral, which does the work in the subscriber's own task.
final class BlueZNotificationLink: GATTNotificationLink {
    let device: String?
    let maximumValueLength: Int
    private let fd: Int32
    private let state = Mutex(State())
    private static let queue = DispatchQueue(label: "gattway.bluez.notification-links")

    /// Dispatch sources are thread-safe for activate/resume/suspend/cancel; this box only carries them across.
    private final class Sources: @unchecked Sendable {
        var read: (any DispatchSourceRead)?
        var write: (any DispatchSourceWrite)?
    }

    private struct State: Sendable {
        var handler: (@Sendable (GATTNotificationLinkEvent) -> Void)?
        let sources = Sources()
        /// The write source runs (it is created on the first EAGAIN and suspended while not needed).
        var writeArmed = false
        var closed = false
    }

    /// Takes ownership of `fd`. `mtu` is the ATT MTU: a notification carries at most MTU−3 bytes.
    init(fd: Int32, mtu: Int, device: String?) {
        self.fd = fd
        self.device = device
        maximumValueLength = max(1, min(mtu - 3, 512))
    }

    func start(_ handler: @escaping @Sendable (GATTNotificationLinkEvent) -> Void) {
        let read = DispatchSource.makeReadSource(fileDescriptor: fd, queue: Self.queue)
        read.setEventHandler { [weak self] in self?.readable() }
        let fd = self.fd
        // The descriptor is closed only once the read source no longer watches it.
        read.setCancelHandler { _ = Glibc.close(fd) }
        let started = state.withLock { state -> Bool in
            guard !state.closed else { return false }
            state.handler = handler
            state.sources.read = read
            return true
        }
        if started { read.activate() } else { _ = Glibc.close(fd) }
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
        if result == .full { armWriteSource() }
        return result
    }

    private func armWriteSource() {
        state.withLock { state in
            guard !state.closed, !state.writeArmed else { return }
            state.writeArmed = true
            if let write = state.sources.write {
                write.resume()
            } else {
                let write = DispatchSource.makeWriteSource(fileDescriptor: fd, queue: Self.queue)
                write.setEventHandler { [weak self] in self?.writable() }
                state.sources.write = write
                write.activate()
            }
        }
    }

    private func writable() {
        let handler = state.withLock { state -> (@Sendable (GATTNotificationLinkEvent) -> Void)? in
            guard state.writeArmed, !state.closed else { return nil }
            state.writeArmed = false
            state.sources.write?.suspend()
            return state.handler
        }
        handler?(.writable)
    }

    /// bluetoothd writes 0x01 when the remote confirms an indication; EOF means it let go of the socket.
    private func readable() {
        var byte: UInt8 = 0
        let count = recv(fd, &byte, 1, Int32(MSG_DONTWAIT))
        if count == 0 || (count < 0 && errno != EAGAIN && errno != EINTR) {
            let handler = state.withLock { $0.handler }
            if shutDown() { handler?(.closed) }
            return
        }
        if count == 1 && byte == 0x01 { state.withLock { $0.handler }?(.confirmed) }
    }

    func close() { _ = shutDown() }

    /// Cancels the sources (the read source's cancel handler closes the descriptor). True the first time.
    private func shutDown() -> Bool {
        state.withLock { state -> Bool in
            guard !state.closed else { return false }
            state.closed = true
            state.handler = nil
            if let write = state.sources.write {
                // Releasing a suspended source is an error in libdispatch: make it run, then cancel.
                if !state.writeArmed { write.resume() }
                write.cancel()
            }
            if let read = state.sources.read {
                read.cancel()
            } else {
                _ = Glibc.close(fd)
            }
            return true
        }
    }
}
