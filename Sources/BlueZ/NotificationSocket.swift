import Dispatch
import Glibc
import Synchronization

/// Reads the notifications bluetoothd writes into an AcquireNotify socket (SOCK_SEQPACKET: one datagram per
/// notification) and hands them on in batches: one batch per readable event, so that a burst costs one hop.
///
/// bluetoothd drops a notification when this socket is full (sendmsg EAGAIN, logged only there), so the reader
/// must keep draining: the consumer's stream is bounded (`maxBufferedBatches`) and a batch that does not fit is
/// dropped here and counted in `droppedNotifications` rather than stalling the socket.
package final class NotificationSocket: Sendable {
    /// A group of notifications read in one go, oldest first.
    package typealias Batch = [[UInt8]]

    package let batches: AsyncStream<Batch>
    private let source: ReadSourceHandle
    private let counters = CounterBox()

    package struct Counters: Sendable {
        package var received = 0
        package var droppedNotifications = 0
    }

    /// Starts reading `fd`, which the reader owns from now on and closes when the peer hangs up or on `close()`.
    package init(fd: Int32, mtu: UInt16, maxBufferedBatches: Int = 1024) {
        let queue = DispatchQueue(label: "gattway.bluez.notify.\(fd)")
        let (stream, continuation) = AsyncStream.makeStream(
            of: Batch.self, bufferingPolicy: .bufferingOldest(maxBufferedBatches))
        batches = stream
        let source = DispatchSource.makeReadSource(fileDescriptor: fd, queue: queue)
        self.source = ReadSourceHandle(source)
        let handle = self.source
        let capacity = max(Int(mtu), 517) + 1
        let counters = self.counters
        source.setEventHandler { [source] in
            var batch: Batch = []
            var buffer = [UInt8](repeating: 0, count: capacity)
            var hungUp = false
            // Drain what is there now, bounded so one busy socket cannot starve the queue.
            for _ in 0..<512 {
                let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, capacity, Int32(MSG_DONTWAIT)) }
                if count > 0 {
                    batch.append(Array(buffer[0..<count]))
                } else if count == 0 {
                    hungUp = true
                    break
                } else {
                    if errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR { break }
                    hungUp = true
                    break
                }
            }
            if !batch.isEmpty {
                let size = batch.count
                if case .dropped = continuation.yield(batch) {
                    counters.value.withLock { $0.droppedNotifications += size }
                } else {
                    counters.value.withLock { $0.received += size }
                }
            }
            if hungUp { source.cancel() }
        }
        source.setCancelHandler {
            Glibc.close(fd)
            continuation.finish()
        }
        continuation.onTermination = { _ in handle.cancel() }
        source.activate()
    }

    package var currentCounters: Counters { counters.value.withLock { $0 } }

    /// Releases the notification session: closing the socket is how AcquireNotify is released.
    package func close() {
        source.cancel()
    }
}

private final class CounterBox: Sendable {
    let value = Mutex(NotificationSocket.Counters())
}

/// A dispatch source shared with the stream's termination handler.
/// @unchecked Sendable: the only call made through it, `cancel()`, is thread-safe in libdispatch.
private final class ReadSourceHandle: @unchecked Sendable {
    private let source: any DispatchSourceRead
    init(_ source: any DispatchSourceRead) { self.source = source }
    func cancel() { source.cancel() }
}
