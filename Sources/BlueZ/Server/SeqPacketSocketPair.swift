import Glibc

/// A connected pair of non-blocking AF_UNIX SOCK_SEQPACKET sockets: one datagram per notification, message
/// boundaries kept. For AcquireNotify of a local characteristic the application creates the pair and hands one
/// end to bluetoothd (gatt-database.c `acquire_notify_reply` reads the fd from the app's reply).
package struct SeqPacketSocketPair: Sendable {
    /// The end Gattway keeps and writes notifications into.
    package let local: Int32
    /// The end given to bluetoothd (libdbus duplicates it when sending; close this one afterwards).
    package let remote: Int32

    package init() throws(SocketPairError) {
        var fds: [Int32] = [-1, -1]
        let kind = Int32(SOCK_SEQPACKET.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue)
        guard socketpair(AF_UNIX, kind, 0, &fds) == 0 else { throw SocketPairError(errno: errno) }
        local = fds[0]
        remote = fds[1]
    }
}

package struct SocketPairError: Error, CustomStringConvertible {
    package let errno: Int32
    package var description: String {
        "socketpair(AF_UNIX, SOCK_SEQPACKET) failed: \(String(cString: strerror(errno)))"
    }
}
