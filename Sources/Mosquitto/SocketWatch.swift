import Glibc
import Polling

/// The loop's watch of one broker connection's socket, with the read pause and the write interest the client sets.
///
/// The watch is on a `dup()` of libmosquitto's socket of its own (see `PollLoop.watch`): libmosquitto closes its fd
/// before we learn the link is gone, and a reconnect that reuses the number must not meet our registration.
/// Not Sendable: used only on the client's loop.
final class SocketWatch {
    private let watch: FileWatch
    private var readPaused = false
    private var writeWatched = false

    init(
        socket: Int32, loop: PollLoop, readable: @escaping @Sendable () -> Void,
        writable: @escaping @Sendable () -> Void
    )
        throws(PollLoopError)
    {
        watch = try loop.watch(socket, readable: readable, writable: writable)
        // Writing is only watched while bytes wait for a full socket (see `MosquittoClient.updateWriteInterest`).
        watch.setInterest(read: true, write: false)
    }

    var fd: Int32 { watch.fileDescriptor }

    /// Asks the kernel to acknowledge what was just read at once rather than after the delayed-ACK timer.
    ///
    /// Brokers often leave Nagle's algorithm on (mosquitto's `set_tcp_nodelay` is false by default): a broker with
    /// a lone small segment in flight, such as the PUBACK of one of our QoS 1 publishes, then holds every further
    /// message to us until that segment is acknowledged, which our delayed ACK defers by up to 40 ms. Linux clears
    /// TCP_QUICKACK again by itself, hence once per read pass.
    func acknowledgeQuickly() {
        var on: Int32 = 1
        _ = setsockopt(fd, Int32(IPPROTO_TCP), TCP_QUICKACK, &on, socklen_t(MemoryLayout<Int32>.size))
    }

    /// TCP_CORK: while set, the kernel sends only full segments; clearing it sends what is held at once.
    func setCorked(_ corked: Bool) {
        var value: Int32 = corked ? 1 : 0
        _ = setsockopt(fd, Int32(IPPROTO_TCP), TCP_CORK, &value, socklen_t(MemoryLayout<Int32>.size))
    }

    var isCorked: Bool {
        var value: Int32 = 0
        var size = socklen_t(MemoryLayout<Int32>.size)
        return getsockopt(fd, Int32(IPPROTO_TCP), TCP_CORK, &value, &size) == 0 && value != 0
    }

    func pauseReading() { setReadPaused(true) }
    func resumeReading() { setReadPaused(false) }

    private func setReadPaused(_ paused: Bool) {
        guard paused != readPaused else { return }
        readPaused = paused
        watch.setInterest(read: !paused, write: writeWatched)
    }

    func watchWrites(_ enabled: Bool) {
        guard enabled != writeWatched else { return }
        writeWatched = enabled
        watch.setInterest(read: !readPaused, write: enabled)
    }

    /// Bytes the kernel holds for reading, so the loop can keep calling `mosquitto_loop_read` (which reads one
    /// packet per call for QoS 0) without waiting for another readiness event.
    var bytesWaiting: Int32 {
        var count: Int32 = 0
        return ioctl(fd, UInt(FIONREAD), &count) == 0 ? count : 0
    }

    /// Stops watching and closes the watch's own descriptor.
    func cancel() {
        watch.cancel()
    }
}
