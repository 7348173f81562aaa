import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// A unix file descriptor carried in a D-Bus message (type `h`).
///
/// Ownership: this object owns its descriptor and closes it in `deinit` unless `take()` was called. libdbus
/// duplicates the descriptor both when it is appended to a message and when it is read from one, so a received
/// `DBusFileDescriptor` owns a fresh duplicate, and sending one never gives the original away.
package final class DBusFileDescriptor: Sendable, Hashable, CustomStringConvertible {
    private let descriptor: Atomic<Int32>

    /// Takes ownership of `rawValue`, which this object will close.
    package init(owning rawValue: Int32) {
        descriptor = Atomic(rawValue)
    }

    /// The descriptor, or -1 once it has been taken.
    package var rawValue: Int32 { descriptor.load(ordering: .acquiring) }

    /// Hands the descriptor to the caller, who must close it; afterwards this object no longer closes it.
    package func take() -> Int32 {
        descriptor.exchange(-1, ordering: .acquiringAndReleasing)
    }

    deinit {
        let fd = descriptor.load(ordering: .acquiring)
        if fd >= 0 { close(fd) }
    }

    package static func == (lhs: DBusFileDescriptor, rhs: DBusFileDescriptor) -> Bool { lhs === rhs }
    package func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }
    package var description: String { "fd(\(rawValue))" }
}
