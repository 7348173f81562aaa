package import Dispatch
import Glibc
import Synchronization

/// Reads the notifications bluetoothd writes into an AcquireNotify socket (SOCK_SEQPACKET: one datagram per
/// notification) and hands them on in batches: one batch per readable event, so that a burst costs one call.
///
/// The socket is read on the queue the owner chooses, and `onBatch` runs there synchronously: a consumer that
/// lives on that queue (an MQTT client's, say) handles notifications with no thread hand-off at all. When
/// `onBatch` returns false the consumer is full: reading pauses until it calls `resume()`. bluetoothd then meets
/// a full socket and drops notifications (sendmsg EAGAIN, logged only by bluetoothd), which is the only
/// backpressure BlueZ offers.
package final class NotificationSocket: Sendable {
    /// A group of notifications read in one go, oldest first.
    package typealias Batch = [[UInt8]]

    private let source: ReadSourceHandle
    private let counters = CounterBox()

    package struct Counters: Sendable {
        package var received = 0
        package var pauses = 0
    }

    /// Starts reading `fd`, which the reader owns from now on and closes when the peer hangs up or on `close()`.
    /// `onBatch` and `onClose` run on `queue`; `onClose` is told whether the peer hung up (true) or `close()` ended
    /// the session (false).
    package init(
        fd: Int32, mtu: UInt16, queue: DispatchQueue, onBatch: @escaping @Sendable (Batch) -> Bool,
        onClose: @escaping @Sendable (_ peerHungUp: Bool) -> Void = { _ in }
    ) {
        let source = DispatchSource.makeReadSource(fileDescriptor: fd, queue: queue)
        let handle = ReadSourceHandle(source, queue: queue, bufferSize: max(Int(mtu), 517) + 1)
        self.source = handle
        let counters = self.counters
        source.setEventHandler {
            var batch: Batch = []
            var hungUp = false
            // Drain what is there now, bounded so one busy socket cannot starve the queue.
            let buffer = handle.receiveBuffer
            for _ in 0..<512 {
                let count = recv(fd, buffer.baseAddress, buffer.count, Int32(MSG_DONTWAIT))
                if count > 0 {
                    // One exact-size copy per notification: it becomes the MQTT payload.
                    batch.append(Array(UnsafeRawBufferPointer(rebasing: buffer[0..<count])))
                } else if count == 0 {
                    // SOCK_SEQPACKET returns 0 both for an empty datagram (an empty notification: a value like any
                    // other) and at end of file. Only a peer that shut down can mean the latter.
                    if Self.isEndOfFile(fd) {
                        hungUp = true
                        break
                    }
                    batch.append([])
                } else {
                    if errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR { break }
                    hungUp = true
                    break
                }
            }
            if !batch.isEmpty {
                counters.value.withLock { $0.received += batch.count }
                if !onBatch(batch) {
                    counters.value.withLock { $0.pauses += 1 }
                    handle.pause()
                }
            }
            if hungUp {
                handle.peerHungUp = true
                handle.cancel()
            }
        }
        source.setCancelHandler {
            Glibc.close(fd)
            onClose(handle.peerHungUp)
        }
        source.activate()
    }

    /// A socket whose batches arrive on an AsyncStream (bounded: a batch that does not fit is dropped).
    package static func streaming(fd: Int32, mtu: UInt16, maxBufferedBatches: Int = 1024)
        -> (NotificationSocket, AsyncStream<Batch>)
    {
        let (stream, continuation) = AsyncStream.makeStream(
            of: Batch.self, bufferingPolicy: .bufferingOldest(maxBufferedBatches))
        let socket = NotificationSocket(
            fd: fd, mtu: mtu, queue: DispatchQueue(label: "gattway.bluez.notify.\(fd)"),
            onBatch: { batch in
                continuation.yield(batch)
                return true
            }, onClose: { _ in continuation.finish() })
        continuation.onTermination = { [socket] _ in socket.close() }
        return (socket, stream)
    }

    /// After a 0-byte `recv`: true when the peer has hung up and nothing but the end of file is left to read.
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

    package var currentCounters: Counters { counters.value.withLock { $0 } }

    /// Whether the socket was closed (by `close()` or by the peer hanging up).
    package var isClosed: Bool { source.isCancelled }

    /// Reading continues after `onBatch` returned false. Call it on the socket's queue.
    package func resume() {
        source.resume()
    }

    /// Releases the notification session: closing the socket is how AcquireNotify is released.
    package func close() {
        source.cancel()
    }
}

private final class CounterBox: Sendable {
    let value = Mutex(NotificationSocket.Counters())
}

/// The read source, shared with its own handlers.
/// @unchecked Sendable: `paused`, `peerHungUp` and `receiveBuffer` are only touched on the source's queue (the event
/// handler, and `resume()`, which callers make on that queue); `cancel()` is thread-safe in libdispatch. A suspended source is resumed before it
/// is released, since libdispatch traps on releasing a suspended source.
private final class ReadSourceHandle: @unchecked Sendable {
    private let source: any DispatchSourceRead
    private let queue: DispatchQueue
    private var paused = false
    /// Set by the event handler before it cancels the source, read by the cancel handler: both on the queue.
    var peerHungUp = false
    /// Reused for every datagram; only the event handler (on the source's queue) touches it.
    let receiveBuffer: UnsafeMutableRawBufferPointer

    init(_ source: any DispatchSourceRead, queue: DispatchQueue, bufferSize: Int) {
        self.source = source
        self.queue = queue
        receiveBuffer = .allocate(byteCount: bufferSize, alignment: 1)
    }

    var isCancelled: Bool { source.isCancelled }

    func pause() {
        guard !paused else { return }
        paused = true
        source.suspend()
    }

    func resume() {
        guard paused else { return }
        paused = false
        source.resume()
    }

    /// Cancels from any thread; a paused source is resumed on its queue so that its cancel handler can run.
    func cancel() {
        source.cancel()
        queue.async { self.resume() }
    }

    deinit {
        if paused { source.resume() }
        receiveBuffer.deallocate()
    }
}
