import CEpoll
import Glibc

/// One file descriptor watched by a `PollLoop`: readiness calls the handlers on the loop thread while the
/// matching interest is on.
///
/// `@unchecked Sendable`: every method must be called on the loop thread (checked), where all of its state lives.
package final class FileWatch: @unchecked Sendable {
    let id: UInt64
    /// The watch's own duplicate of the descriptor it was given; the registration in epoll is on this number.
    package let fileDescriptor: Int32
    let readable: @Sendable () -> Void
    let writable: @Sendable () -> Void
    private(set) var wantsRead = false
    private(set) var wantsWrite = false
    /// Registered in epoll: only while some interest is on, so a hung-up socket nobody reads cannot make a
    /// level-triggered epoll report EPOLLHUP in every turn.
    private var registered = false
    private(set) var isCancelled = false
    /// Strong: a weak reference would give the core a side table, and every retain and release of it would take the
    /// runtime's slow path, on every turn. The core forgets the watch when it is cancelled and all of them when the
    /// loop ends, so the two do not keep each other.
    private let core: PollLoopCore

    init(
        id: UInt64, fileDescriptor: Int32, core: PollLoopCore, readable: @escaping @Sendable () -> Void,
        writable: @escaping @Sendable () -> Void
    ) {
        self.id = id
        self.fileDescriptor = fileDescriptor
        self.core = core
        self.readable = readable
        self.writable = writable
    }

    /// Turns the read and write interests on or off.
    package func setInterest(read: Bool, write: Bool) {
        guard !core.hasEnded, !isCancelled else { return }
        core.checkLoopThread()
        guard read != wantsRead || write != wantsWrite else { return }
        wantsRead = read
        wantsWrite = write
        var event = epoll_event()
        event.events = (read ? EPOLLIN.rawValue : 0) | (write ? EPOLLOUT.rawValue : 0)
        event.data.u64 = id
        let operation: Int32
        if !read && !write {
            operation = EPOLL_CTL_DEL
            registered = false
        } else {
            operation = registered ? EPOLL_CTL_MOD : EPOLL_CTL_ADD
            registered = true
        }
        // Cannot fail for a descriptor we own and a valid epoll instance, short of the kernel's memory running out;
        // then the socket simply stays unwatched in that direction, which the owner's timeouts notice.
        _ = epoll_ctl(core.epoll, operation, fileDescriptor, &event)
    }

    package func setReadInterest(_ on: Bool) { setInterest(read: on, write: wantsWrite) }
    package func setWriteInterest(_ on: Bool) { setInterest(read: wantsRead, write: on) }

    /// Stops watching and closes the watch's descriptor; no handler runs after this, even for events of this turn.
    package func cancel() {
        guard !core.hasEnded, !isCancelled else { return }
        core.checkLoopThread()
        if registered {
            var event = epoll_event()
            _ = epoll_ctl(core.epoll, EPOLL_CTL_DEL, fileDescriptor, &event)
        }
        registered = false
        isCancelled = true
        close(fileDescriptor)
        core.forgetWatch(id)
    }

    /// Closes the descriptor when the loop ends with the watch still open.
    func closeAtLoopEnd() {
        guard !isCancelled else { return }
        isCancelled = true
        close(fileDescriptor)
    }
}
