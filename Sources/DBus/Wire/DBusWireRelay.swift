internal import CDBus
import Glibc
import Polling

/// The bus's socket, read by Gattway itself, and libdbus put behind it.
///
/// libdbus checks every message it reads as hostile input, through some sixty lock operations and a walk of every
/// signature, which costs more than anything Gattway then does with an advertisement report. The relay reads the
/// bus's stream in large pieces and cuts it into messages by their fixed headers; the signals a tap reads in place
/// (advertisement reports, characteristic values) are handed to it straight from those bytes, and every other
/// message goes on, in order and with its descriptors, into a socket pair whose other end is a private libdbus
/// connection, which reads and dispatches it as if it came from the bus. What libdbus writes (calls, replies,
/// signals) comes back through the pair and is written to the bus. The bus (dbus-daemon) checked each message
/// before routing it and sets its sender; the relay reads no field it has not bounds-checked, and anything it does
/// not read in full goes to libdbus.
///
/// Order: before a message is read in place, every message before it has been read and dispatched by libdbus (see
/// `DBusConnection.handOnToLibdbus`).
///
/// A class, owned by its connection alone: as a struct in the connection's optional property, reading one field
/// (`relay?.bus`) or testing it copied the whole relay, retaining and releasing each of its buffers, several times a
/// batch.
final class DBusWireRelay {
    /// The bus's socket and the relay's end of libdbus's; the watches own them.
    let bus: FileWatch
    let libdbus: FileWatch
    /// Bytes read from the bus and not yet cut into messages, and the descriptors that came with them and have not
    /// been handed on.
    var inbound: [UInt8] = []
    var inboundDescriptors: [Int32] = []
    /// Bytes for libdbus, and for the bus, not yet written.
    var toLibdbus = DBusOutgoingBytes()
    var toBus = DBusOutgoingBytes()
    /// Set while libdbus has not read everything handed to it: nothing is taken in place until it has, so that
    /// nothing overtakes what it holds.
    var libdbusBehind = false
    /// libdbus's authentication, read up to its BEGIN; nil after it.
    var libdbusAuthentication: [UInt8]? = []
    private var scratch = [UInt8](repeating: 0, count: DBusWireRelay.readSize)

    /// One read's size: a 20 ms batch of a thousand advertisers' reports is about 60 KiB.
    static let readSize = 64 * 1024
    /// What may wait to be written to the bus before libdbus's side is no longer read (its own bound, on its
    /// queue, then refuses more: `DBusConnection.maxOutgoingBytes`).
    static let maxPendingToBus = 16 * 1024 * 1024
    /// What may wait for libdbus to read before the bus is no longer read.
    static let maxPendingToLibdbus = 16 * 1024 * 1024

    init(bus: FileWatch, libdbus: FileWatch, leftover: [UInt8]) {
        self.bus = bus
        self.libdbus = libdbus
        inbound = leftover
    }

    enum ReadResult: Equatable {
        case read(Int)
        case wouldBlock
        case ended
        case failed(String)
    }

    /// Reads once from `socket` into `buffer`, its descriptors into `descriptors`.
    func read(
        from socket: Int32, into buffer: inout [UInt8], descriptors: inout [Int32]
    ) -> ReadResult {
        var count: Int32 = 0
        var truncated: Int32 = 0
        // On the stack: a read per value must not allocate for descriptors that almost never come.
        let received = withUnsafeTemporaryAllocation(of: Int32.self, capacity: Int(GATTWAY_MAX_PASSED_FDS)) { fds in
            let received = scratch.withUnsafeMutableBytes { bytes in
                gattway_receive_with_fds(socket, bytes.baseAddress, bytes.count, fds.baseAddress, &count, &truncated)
            }
            descriptors.append(contentsOf: fds[..<Int(count)])
            return received
        }
        if truncated != 0 { return .failed("file descriptors were cut off") }
        if received > 0 {
            buffer.append(contentsOf: scratch[..<received])
            return .read(received)
        }
        if received == 0 { return .ended }
        if errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR { return .wouldBlock }
        return .failed(String(cString: strerror(errno)))
    }

    /// Reads from the bus once.
    func readBus() -> ReadResult {
        var buffer = inbound
        inbound = []
        var descriptors = inboundDescriptors
        inboundDescriptors = []
        defer {
            inbound = buffer
            inboundDescriptors = descriptors
        }
        return read(from: bus.fileDescriptor, into: &buffer, descriptors: &descriptors)
    }

    /// Reads what libdbus wrote and queues it for the bus, past libdbus's authentication.
    func readLibdbus() -> ReadResult {
        var bytes: [UInt8] = []
        var descriptors: [Int32] = []
        let result = read(from: libdbus.fileDescriptor, into: &bytes, descriptors: &descriptors)
        guard case .read = result else {
            for descriptor in descriptors { close(descriptor) }
            return result
        }
        if var authentication = libdbusAuthentication {
            authentication.append(contentsOf: bytes)
            switch Self.skipAuthentication(authentication) {
            case .incomplete:
                guard authentication.count <= DBusWireHandshake.maxAuthenticationBytes else {
                    for descriptor in descriptors { close(descriptor) }
                    return .failed("libdbus's authentication went on for too long")
                }
                libdbusAuthentication = authentication
                bytes = []
            case .refused(let reason):
                for descriptor in descriptors { close(descriptor) }
                return .failed(reason)
            case .done(let rest):
                libdbusAuthentication = nil
                bytes = Array(authentication[rest...])
            }
        }
        bytes.withUnsafeBytes { toBus.append($0, descriptors: descriptors) }
        return result
    }

    enum Authentication: Equatable {
        case incomplete
        case refused(String)
        /// Where the messages start, after BEGIN.
        case done(Int)
    }

    /// libdbus's side of the authentication the relay answered before it asked (see
    /// `DBusWireHandshake.openLibdbus`): a NUL, `AUTH EXTERNAL …`, then `NEGOTIATE_UNIX_FD` when it asked for
    /// descriptors, then `BEGIN`. Anything else is refused: libdbus would be out of step with its answers.
    static func skipAuthentication(_ bytes: [UInt8]) -> Authentication {
        guard let first = bytes.first else { return .incomplete }
        guard first == 0 else { return .refused("libdbus's authentication did not start with a NUL") }
        var start = 1
        var lines = 0
        while let end = lineEnd(in: bytes[start...]) {
            let line = String(decoding: bytes[start..<end], as: UTF8.self)
            start = end + 2
            lines += 1
            switch (lines, line) {
            case (1, _) where line.hasPrefix("AUTH EXTERNAL"):
                continue
            case (2, "NEGOTIATE_UNIX_FD"):
                continue
            case (2, "BEGIN"), (3, "BEGIN"):
                return .done(start)
            default:
                return .refused("libdbus said \(line.prefix(64)) while authenticating")
            }
        }
        return .incomplete
    }

    /// Where the first CR LF in `bytes` starts (an index of the whole array), if there is one: the end of a line
    /// of the authentication, either side's.
    static func lineEnd(in bytes: ArraySlice<UInt8>) -> Int? {
        var index = bytes.startIndex
        while index + 1 < bytes.endIndex {
            if bytes[index] == 13 && bytes[index + 1] == 10 { return index }
            index += 1
        }
        return nil
    }

    /// Closes every descriptor still held for handing on.
    func closeDescriptors() {
        for descriptor in inboundDescriptors { close(descriptor) }
        inboundDescriptors = []
        toLibdbus.closeDescriptors()
        toBus.closeDescriptors()
    }
}

/// Bytes waiting to be written to a socket, with the descriptors that go with them: each group goes with the first
/// write that carries the first byte it came with, so it arrives no later than the message that needs it.
struct DBusOutgoingBytes {
    private var bytes: [UInt8] = []
    private var start = 0
    private var descriptors: [(offset: Int, fds: [Int32])] = []

    var isEmpty: Bool { start == bytes.count }
    var count: Int { bytes.count - start }

    mutating func append(_ more: UnsafeRawBufferPointer, descriptors passed: [Int32]) {
        if start > 0, start == bytes.count {
            bytes.removeAll(keepingCapacity: true)
            for index in descriptors.indices { descriptors[index].offset -= start }
            start = 0
        }
        if !passed.isEmpty { descriptors.append((bytes.count, passed)) }
        bytes.append(contentsOf: more)
    }

    enum WriteResult: Equatable {
        case drained
        case blocked
        case failed(String)
    }

    /// Writes as much as `socket` takes now.
    mutating func write(to socket: Int32) -> WriteResult {
        while start < bytes.count {
            var end = bytes.count
            var group: [Int32] = []
            if let first = descriptors.first {
                if first.offset <= start {
                    group = first.fds
                    if descriptors.count > 1 { end = descriptors[1].offset }
                } else {
                    end = first.offset
                }
            }
            let sent = bytes[start..<end].withUnsafeBytes { chunk in
                group.withUnsafeBufferPointer { fds in
                    gattway_send_with_fds(socket, chunk.baseAddress, chunk.count, fds.baseAddress, Int32(fds.count))
                }
            }
            if sent < 0 {
                if errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR { return .blocked }
                return .failed(String(cString: strerror(errno)))
            }
            if !group.isEmpty {
                // The kernel holds its own copies now.
                for descriptor in group { close(descriptor) }
                descriptors.removeFirst()
            }
            start += sent
        }
        bytes.removeAll(keepingCapacity: bytes.capacity <= 256 * 1024)
        start = 0
        return .drained
    }

    mutating func closeDescriptors() {
        for group in descriptors { for descriptor in group.fds { close(descriptor) } }
        descriptors = []
    }
}
