import Glibc
package import Polling
import Synchronization

/// Reads the notifications bluetoothd writes into an AcquireNotify socket (SOCK_SEQPACKET: one datagram per
/// notification) and hands them on in batches: one batch per readable event, so that a burst costs one call.
///
/// The socket is watched by the loop the owner chooses, and `onBatch` runs there synchronously: a consumer that
/// lives on that loop (an MQTT client's, say) handles notifications with no thread hand-off at all. When
/// `onBatch` returns false the consumer is full: reading pauses until it calls `resume()`. bluetoothd then meets
/// a full socket and drops notifications (sendmsg EAGAIN, logged only by bluetoothd), which is the only
/// backpressure BlueZ offers.
package final class NotificationSocket: Sendable {
    /// A group of notifications read in one go, oldest first.
    package typealias Batch = [[UInt8]]

    private let reader: SocketReader
    private let status = SocketStatus()

    package struct Counters: Sendable {
        package var received = 0
        package var pauses = 0
    }

    /// Starts reading `fd`, which the reader owns from now on and closes when the peer hangs up or on `close()`.
    /// `onBatch` and `onClose` run on `loop`; `onClose` is told whether the peer hung up (true) or `close()` ended
    /// the session (false).
    package init(
        fd: Int32, mtu: UInt16, loop: PollLoop, onBatch: @escaping @Sendable (Batch) -> Bool,
        onClose: @escaping @Sendable (_ peerHungUp: Bool) -> Void = { _ in }
    ) {
        let status = self.status
        let reader = SocketReader(
            fd: fd, bufferSize: max(Int(mtu), 517) + 1, loop: loop, status: status, onBatch: onBatch,
            onClose: { hungUp in
                status.closed.store(true, ordering: .relaxed)
                onClose(hungUp)
            })
        self.reader = reader
        loop.execute { reader.start() }
    }

    /// Released without `close()`: the session ends all the same (the watch holds the reader until it is cancelled).
    deinit {
        let reader = reader
        reader.loop.execute { reader.abandon() }
    }

    /// A socket whose batches arrive on an AsyncStream (bounded: a batch that does not fit is dropped), read on a
    /// loop of its own.
    package static func streaming(fd: Int32, mtu: UInt16, maxBufferedBatches: Int = 1024) throws(PollLoopError)
        -> (NotificationSocket, AsyncStream<Batch>)
    {
        let (stream, continuation) = AsyncStream.makeStream(
            of: Batch.self, bufferingPolicy: .bufferingOldest(maxBufferedBatches))
        let loop = try PollLoop(name: "notify.\(fd)")
        let socket = NotificationSocket(
            fd: fd, mtu: mtu, loop: loop,
            onBatch: { batch in
                continuation.yield(batch)
                return true
            }, onClose: { _ in continuation.finish() })
        continuation.onTermination = { [socket] _ in socket.close() }
        return (socket, stream)
    }

    package var currentCounters: Counters { status.counters.withLock { $0 } }

    /// Whether the socket was closed (by `close()` or by the peer hanging up).
    package var isClosed: Bool { status.closed.load(ordering: .relaxed) }

    /// Reading continues after `onBatch` returned false. Call it on the socket's loop.
    package func resume() {
        reader.resume()
    }

    /// Releases the notification session: closing the socket is how AcquireNotify is released. Callable from any
    /// thread; `onClose(false)` follows on the loop.
    package func close() {
        status.closed.store(true, ordering: .relaxed)
        reader.loop.execute { [reader] in reader.finish(peerHungUp: false) }
    }
}

/// What the socket's owner may read from any thread.
private final class SocketStatus: Sendable {
    let counters = Mutex(NotificationSocket.Counters())
    let closed = Atomic<Bool>(false)
}

/// The socket's watch and reading state.
///
/// @unchecked Sendable: everything but `loop` is only touched on the loop thread (the watch's handler, `start`,
/// `finish`, `abandon`, and `resume()`, which callers make on the loop).
private final class SocketReader: @unchecked Sendable {
    let loop: PollLoop
    private var fd: Int32
    private let onBatch: @Sendable ([[UInt8]]) -> Bool
    private let onClose: @Sendable (Bool) -> Void
    private let status: SocketStatus
    private var watch: FileWatch?
    private var paused = false
    private var finished = false
    private var batch: [[UInt8]] = []
    /// Reused for every read.
    private let datagrams: DatagramBatch

    init(
        fd: Int32, bufferSize: Int, loop: PollLoop, status: SocketStatus,
        onBatch: @escaping @Sendable ([[UInt8]]) -> Bool,
        onClose: @escaping @Sendable (Bool) -> Void
    ) {
        self.fd = fd
        self.loop = loop
        self.status = status
        self.onBatch = onBatch
        self.onClose = onClose
        datagrams = DatagramBatch(capacity: 16, datagramSize: bufferSize)
    }

    func start() {
        guard !finished else { return }
        do {
            let watch = try loop.watch(
                // Strongly: a weak reference would put every retain and release of the reader, one pair a read, on
                // the runtime's slow path. `finish` or `abandon` cancels the watch and lets it go.
                fd, readable: { [self] in self.readAvailable() }, writable: {})
            // The watch reads its own duplicate from now on; the socket is released when the watch is cancelled.
            Glibc.close(fd)
            fd = watch.fileDescriptor
            self.watch = watch
            watch.setInterest(read: !paused, write: false)
        } catch {
            // Out of descriptors: the session cannot be read, so it ends as if bluetoothd had closed it.
            finish(peerHungUp: true)
        }
    }

    func resume() {
        guard paused else { return }
        paused = false
        watch?.setInterest(read: true, write: false)
    }

    /// The owner let go without `close()`: ends the session without telling `onClose`. Once watched, the descriptor
    /// is the watch's, and only the watch may close it; closing its number as well would later close whatever
    /// reused the number.
    func abandon() {
        _ = stopReading()
    }

    func finish(peerHungUp: Bool) {
        if stopReading() { onClose(peerHungUp) }
    }

    /// Cancels the watch (which closes its descriptor), or closes the socket when it was never watched. True the
    /// first time.
    private func stopReading() -> Bool {
        guard !finished else { return false }
        finished = true
        if let watch {
            watch.cancel()
        } else {
            Glibc.close(fd)
        }
        watch = nil
        return true
    }

    private func readAvailable() {
        // The batch's array is kept between reads (emptied, not replaced): a consumer that keeps the batch gets
        // its own copy on the next append.
        batch.removeAll(keepingCapacity: true)
        var hungUp = false
        // What is queued now, in one call (at most `datagrams.capacity`: the loop comes back while more is queued).
        if let received = datagrams.receive(from: fd) {
            // SOCK_SEQPACKET reads 0 bytes both for an empty datagram (an empty notification: a value like any
            // other) and at the end of file, which fills every slot after it. An empty datagram with bytes after
            // it is a value; only the trailing empty run can be the end of file, and only a peer that shut down
            // can make it that.
            let lastWithBytes = (0..<received).last { !datagrams.datagram(at: $0).isEmpty } ?? -1
            var endOfFile: Bool?
            for index in 0..<received {
                let bytes = datagrams.datagram(at: index)
                if bytes.isEmpty && index > lastWithBytes {
                    let atEnd = endOfFile ?? Self.isEndOfFile(fd)
                    endOfFile = atEnd
                    if atEnd {
                        hungUp = true
                        break
                    }
                }
                // One exact-size copy per notification: it becomes the MQTT payload.
                batch.append(Array(bytes))
            }
        } else if errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR {
            hungUp = true
        }
        if !batch.isEmpty {
            let taken = onBatch(batch)
            status.counters.withLock {
                $0.received += batch.count
                if !taken { $0.pauses += 1 }
            }
            if !taken && !finished {
                paused = true
                watch?.setInterest(read: false, write: false)
            }
        }
        if hungUp { finish(peerHungUp: true) }
    }

    /// After a 0-byte read: true when the peer has hung up and nothing but the end of file is left to read.
    ///
    /// A datagram sent before the hang-up is still read first (the kernel keeps the queue), so with POLLHUP set the
    /// 0 is the end of file unless bytes are still queued behind it. Empty datagrams queued right before a hang-up
    /// cannot be told from the end of file and are lost with the link.
    private static func isEndOfFile(_ fd: Int32) -> Bool {
        // POLLRDHUP (Linux): Glibc's module exposes it only under _GNU_SOURCE.
        let readHangUp: Int16 = 0x2000
        var descriptor = pollfd(fd: fd, events: Int16(POLLIN) | readHangUp, revents: 0)
        guard poll(&descriptor, 1, 0) >= 0 else { return true }
        let hangUp = Int16(POLLHUP) | readHangUp | Int16(POLLERR) | Int16(POLLNVAL)
        guard descriptor.revents & hangUp != 0 else { return false }
        var queued: Int32 = 0
        guard ioctl(fd, UInt(FIONREAD), &queued) == 0 else { return true }
        return queued == 0
    }
}
