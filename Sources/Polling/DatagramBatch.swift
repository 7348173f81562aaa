import CEpoll
import Glibc

/// Receives the datagrams queued on a socket with one `recvmmsg` call, into buffers it keeps: a notification
/// socket's reader then pays one system call per readable event, not one per datagram plus the one that finds the
/// socket empty.
///
/// Not Sendable: its owner uses it on one thread (a `PollLoop`'s).
package final class DatagramBatch {
    /// Datagrams one call reads at most.
    package let capacity: Int
    /// Bytes of each datagram kept at most; a longer one is cut to this (its `MSG_TRUNC` is not reported).
    package let datagramSize: Int
    private let storage: UnsafeMutableRawBufferPointer
    private let vectors: UnsafeMutableBufferPointer<iovec>
    private let headers: UnsafeMutableBufferPointer<gattway_mmsghdr>
    /// Datagrams the last `receive` read.
    package private(set) var count = 0

    package init(capacity: Int, datagramSize: Int) {
        precondition(capacity > 0 && datagramSize > 0)
        self.capacity = capacity
        self.datagramSize = datagramSize
        storage = .allocate(byteCount: capacity * datagramSize, alignment: 16)
        vectors = .allocate(capacity: capacity)
        headers = .allocate(capacity: capacity)
        for index in 0..<capacity {
            vectors[index] = iovec(iov_base: storage.baseAddress! + index * datagramSize, iov_len: datagramSize)
            var header = gattway_mmsghdr()
            header.msg_hdr.msg_iov = vectors.baseAddress! + index
            header.msg_hdr.msg_iovlen = 1
            headers[index] = header
        }
    }

    deinit {
        storage.deallocate()
        vectors.deallocate()
        headers.deallocate()
    }

    /// Reads what is queued on `fd` without waiting, up to `capacity` datagrams. Returns how many (then
    /// `datagram(at:)` reads them), or nil with `errno` set (EAGAIN: nothing was queued).
    ///
    /// A peer that has shut down reads as a run of empty datagrams at the end, one per free slot, as `recv` reads
    /// 0 at the end of file each time it is called.
    package func receive(from fd: Int32) -> Int? {
        for index in 0..<capacity { headers[index].msg_len = 0 }
        let received = gattway_recvmmsg(fd, headers.baseAddress, UInt32(capacity), Int32(MSG_DONTWAIT))
        guard received >= 0 else {
            count = 0
            return nil
        }
        count = Int(received)
        return count
    }

    /// The bytes of datagram `index` of the last `receive` (valid until the next one).
    package func datagram(at index: Int) -> UnsafeRawBufferPointer {
        precondition(index >= 0 && index < count)
        let length = min(Int(headers[index].msg_len), datagramSize)
        return UnsafeRawBufferPointer(start: storage.baseAddress! + index * datagramSize, count: length)
    }
}
