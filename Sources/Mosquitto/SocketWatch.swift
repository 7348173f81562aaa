import Dispatch
import Glibc

/// The read and write DispatchSources of one broker connection, with their suspend/resume balance.
///
/// Each source watches its own `dup()` of libmosquitto's socket and closes it in its cancel handler: libmosquitto
/// closes its fd before we learn the link is gone, and the dup keeps the number we registered ours until the
/// source is really cancelled, so a reconnect that reuses the number cannot meet a stale registration.
/// Not Sendable: used only on the client's queue.
final class SocketWatch {
    let fd: Int32
    private let read: any DispatchSourceRead
    private let write: any DispatchSourceWrite
    private var readSuspended = false
    private var writeSuspended = false

    init?(
        socket: Int32, queue: DispatchQueue, readable: @escaping @Sendable () -> Void,
        writable: @escaping @Sendable () -> Void
    ) {
        let readFD = dup(socket)
        guard readFD >= 0 else { return nil }
        let writeFD = dup(socket)
        guard writeFD >= 0 else {
            close(readFD)
            return nil
        }
        fd = readFD
        read = DispatchSource.makeReadSource(fileDescriptor: readFD, queue: queue)
        write = DispatchSource.makeWriteSource(fileDescriptor: writeFD, queue: queue)
        read.setEventHandler(handler: readable)
        read.setCancelHandler { close(readFD) }
        write.setEventHandler(handler: writable)
        write.setCancelHandler { close(writeFD) }
        read.activate()
        write.activate()
        // Writing is only watched while libmosquitto has unsent data (`mosquitto_want_write`).
        write.suspend()
        writeSuspended = true
    }

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

    func pauseReading() {
        guard !readSuspended else { return }
        read.suspend()
        readSuspended = true
    }

    func resumeReading() {
        guard readSuspended else { return }
        read.resume()
        readSuspended = false
    }

    func watchWrites(_ enabled: Bool) {
        if enabled && writeSuspended {
            write.resume()
            writeSuspended = false
        } else if !enabled && !writeSuspended {
            write.suspend()
            writeSuspended = true
        }
    }

    /// Bytes the kernel holds for reading, so the loop can keep calling `mosquitto_loop_read` (which reads one
    /// packet per call for QoS 0) without waiting for another readiness event.
    var bytesWaiting: Int32 {
        var count: Int32 = 0
        return ioctl(fd, UInt(FIONREAD), &count) == 0 ? count : 0
    }

    /// Cancels both sources; a suspended source must be resumed, or its cancel handler never runs and releasing
    /// it crashes.
    func cancel() {
        read.cancel()
        write.cancel()
        resumeReading()
        watchWrites(true)
    }
}
