internal import CDBus
import Glibc

/// Opening a connection whose bus socket Gattway reads itself (see `DBusWireRelay`): the bus's side, authenticated
/// (SASL EXTERNAL, descriptor passing negotiated) and registered (Hello) here, and libdbus's side, a private
/// connection to a socket of this process that the relay feeds.
///
/// Blocking, with one deadline for the whole exchange; runs on the connection's loop while it opens, as libdbus's
/// own opening did.
enum DBusWireHandshake {
    /// What the bus's side of the handshake gives.
    struct Registered {
        /// The bus's socket, non-blocking, owned by the caller.
        let socket: Int32
        let uniqueName: String
        /// The bus's GUID, from its OK.
        let guid: String
        /// Whether the bus agreed to pass descriptors.
        let passesDescriptors: Bool
        /// Bytes the bus sent after Hello's reply (NameAcquired, say), still to be read as messages.
        let leftover: [UInt8]
    }

    /// libdbus's default wait for a reply, and for its own opening.
    static let timeout: Duration = .seconds(25)
    /// The most the bus may say during authentication before it is given up on.
    static let maxAuthenticationBytes = 16 * 1024
    /// The most Hello's reply and what comes with it may take.
    static let maxRegistrationBytes = 1024 * 1024

    /// Connects to `address`, authenticates as this process's user and registers.
    static func register(at address: DBusUnixAddress, description: String) throws(DBusError) -> Registered {
        let deadline = ContinuousClock.now + timeout
        let socket = address.path.withCString { gattway_unix_connect($0, address.isAbstract ? 1 : 0) }
        guard socket >= 0 else { throw failure("cannot connect to \(description)", errno: errno) }
        do throws(DBusError) {
            _ = fcntl(socket, F_SETFL, fcntl(socket, F_GETFL) | O_NONBLOCK)
            var io = BlockingIO(socket: socket, deadline: deadline, description: description)
            // A NUL first (where a sender's credentials may travel), then the user id in hex of its decimal digits.
            let user = Array(String(getuid()).utf8).map { WireHex.two($0) }.joined()
            try io.write([0] + Array("AUTH EXTERNAL \(user)\r\n".utf8))
            let ok = try io.line()
            guard ok.hasPrefix("OK "), ok.count > 3 else {
                throw DBusError(name: DBusError.accessDenied, message: "\(description) refused EXTERNAL: \(ok)")
            }
            let guid = String(ok.dropFirst(3))
            try io.write(Array("NEGOTIATE_UNIX_FD\r\n".utf8))
            let agreement = try io.line()
            guard agreement == "AGREE_UNIX_FD" || agreement.hasPrefix("ERROR") else {
                throw DBusError(
                    name: DBusError.failed, message: "\(description) answered NEGOTIATE_UNIX_FD with \(agreement)")
            }
            try io.write(Array("BEGIN\r\n".utf8) + hello())
            let (uniqueName, leftover) = try io.helloReply()
            return Registered(
                socket: socket, uniqueName: uniqueName, guid: guid, passesDescriptors: agreement == "AGREE_UNIX_FD",
                leftover: leftover)
        } catch {
            close(socket)
            throw error
        }
    }

    /// A private libdbus connection to a socket of this process, the other end of which is returned: a listening
    /// socket in the abstract namespace, under a random name, takes libdbus's connection and is closed at once; the
    /// connection is accepted only from this process. libdbus's authentication is answered before it asks (OK with
    /// the bus's GUID, then descriptor passing as the bus agreed); the relay reads its side of it (see
    /// `DBusWireRelay.skipAuthentication`). The connection knows itself by the bus's unique name for it.
    static func openLibdbus(
        for registered: Registered, description: String
    ) throws(DBusError) -> (connection: OpaquePointer, socket: Int32) {
        let name = "gattway-dbus-\(getpid())-\(WireHex.random(bytes: 16))"
        let listener = name.withCString { gattway_unix_listen_abstract($0) }
        guard listener >= 0 else { throw failure("cannot listen for libdbus's side of \(description)", errno: errno) }
        defer { close(listener) }
        var error = CDBus.DBusError()
        dbus_error_init(&error)
        defer { dbus_error_free(&error) }
        guard let connection = dbus_connection_open_private("unix:abstract=\(name)", &error) else {
            let message = error.message.map { String(cString: $0) } ?? ""
            throw DBusError(name: DBusError.failed, message: "libdbus cannot connect to the relay: \(message)")
        }
        var accepted: Int32 = -1
        // libdbus connected before returning; what waits is this process's connection, unless another process
        // raced it to the name, which is refused.
        for _ in 0..<8 {
            var poller = pollfd(fd: listener, events: Int16(POLLIN), revents: 0)
            guard poll(&poller, 1, 1000) == 1 else { break }
            let candidate = gattway_unix_accept(listener)
            guard candidate >= 0 else { continue }
            if gattway_unix_peer_pid(candidate) == getpid() {
                accepted = candidate
                break
            }
            close(candidate)
        }
        guard accepted >= 0 else {
            dbus_connection_close(connection)
            dbus_connection_unref(connection)
            throw DBusError(name: DBusError.failed, message: "libdbus's side of \(description) did not connect")
        }
        let answer = "OK \(registered.guid)\r\n" + (registered.passesDescriptors ? "AGREE_UNIX_FD\r\n" : "ERROR\r\n")
        let bytes = Array(answer.utf8)
        guard write(accepted, bytes, bytes.count) == bytes.count else {
            let code = errno
            close(accepted)
            dbus_connection_close(connection)
            dbus_connection_unref(connection)
            throw failure("cannot answer libdbus's authentication", errno: code)
        }
        _ = fcntl(accepted, F_SETFL, fcntl(accepted, F_GETFL) | O_NONBLOCK)
        dbus_connection_set_exit_on_disconnect(connection, 0)
        _ = dbus_bus_set_unique_name(connection, registered.uniqueName)
        return (connection, accepted)
    }

    /// Hello, serial 1, marshalled.
    private static func hello() throws(DBusError) -> [UInt8] {
        guard
            let message = dbus_message_new_method_call(
                "org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus", "Hello")
        else { throw DBusError(name: DBusError.noMemory, message: "cannot make Hello") }
        defer { dbus_message_unref(message) }
        dbus_message_set_serial(message, 1)
        var data: UnsafeMutablePointer<CChar>?
        var length: Int32 = 0
        guard dbus_message_marshal(message, &data, &length) != 0, let data else {
            throw DBusError(name: DBusError.noMemory, message: "cannot marshal Hello")
        }
        defer { dbus_free(data) }
        return Array(UnsafeRawBufferPointer(start: data, count: Int(length)))
    }

    static func failure(_ context: String, errno code: Int32) -> DBusError {
        DBusError(name: DBusError.failed, message: "\(context): \(String(cString: strerror(code)))")
    }
}

/// Reads and writes of the handshake: each waits at most until the deadline.
private struct BlockingIO {
    let socket: Int32
    let deadline: ContinuousClock.Instant
    let description: String
    var received: [UInt8] = []

    mutating func write(_ bytes: [UInt8]) throws(DBusError) {
        var sent = 0
        while sent < bytes.count {
            let count = bytes[sent...].withUnsafeBytes {
                Glibc.send(socket, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL))
            }
            if count > 0 {
                sent += count
            } else if count < 0, errno == EAGAIN || errno == EINTR {
                try wait(for: POLLOUT)
            } else {
                throw DBusWireHandshake.failure("cannot write to \(description)", errno: errno)
            }
        }
    }

    /// The next line of the bus's authentication, without its CR LF.
    mutating func line() throws(DBusError) -> String {
        while true {
            if let end = DBusWireRelay.lineEnd(in: received[...]) {
                let line = String(decoding: received[..<end], as: UTF8.self)
                received.removeFirst(end + 2)
                return line
            }
            guard received.count < DBusWireHandshake.maxAuthenticationBytes else {
                throw DBusError(name: DBusError.failed, message: "\(description) sent too long an authentication line")
            }
            try readMore()
        }
    }

    /// Reads until the reply to Hello (serial 1) is in: the unique name, and every byte after that reply.
    mutating func helloReply() throws(DBusError) -> (String, [UInt8]) {
        var start = 0
        while true {
            let length = received[start...].withUnsafeBytes { DBusWireFrame.length(of: $0) }
            switch length {
            case .invalid(let reason):
                throw DBusError(name: DBusError.failed, message: "\(description) sent no message: \(reason)")
            case .message(let total) where received.count - start >= total:
                let reply = received[start..<start + total].withUnsafeBytes { bytes in
                    Result { () throws(DBusError) in try Self.uniqueName(inReply: bytes, description: description) }
                }
                if let name = try reply.get() {
                    return (name, Array(received[(start + total)...]))
                }
                start += total
                continue
            case .message, .needMore:
                break
            }
            guard received.count < DBusWireHandshake.maxRegistrationBytes else {
                throw DBusError(name: DBusError.failed, message: "\(description) sent no reply to Hello")
            }
            try readMore()
        }
    }

    /// The unique name in a reply to Hello, nil when the message is something else; an error reply throws.
    private static func uniqueName(
        inReply bytes: UnsafeRawBufferPointer, description: String
    ) throws(DBusError) -> String? {
        var error = CDBus.DBusError()
        dbus_error_init(&error)
        defer { dbus_error_free(&error) }
        guard let base = bytes.baseAddress,
            let message = dbus_message_demarshal(base.assumingMemoryBound(to: CChar.self), Int32(bytes.count), &error)
        else {
            let reason = error.message.map { String(cString: $0) } ?? "unreadable"
            throw DBusError(name: DBusError.failed, message: "\(description) sent a broken message: \(reason)")
        }
        defer { dbus_message_unref(message) }
        guard dbus_message_get_reply_serial(message) == 1 else { return nil }
        if dbus_message_get_type(message) == DBusMessageKind.error {
            let name = dbus_message_get_error_name(message).map { String(cString: $0) } ?? DBusError.failed
            throw DBusError(
                name: name, message: "\(description) refused Hello: \(DBusMessageReader.firstString(of: message) ?? "")"
            )
        }
        guard let name = DBusMessageReader.firstString(of: message), !name.isEmpty else {
            throw DBusError(name: DBusError.failed, message: "\(description) gave no unique name")
        }
        return name
    }

    private mutating func readMore() throws(DBusError) {
        var chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = chunk.withUnsafeMutableBytes { recv(socket, $0.baseAddress, $0.count, 0) }
            if count > 0 {
                received.append(contentsOf: chunk[..<count])
                return
            }
            if count == 0 {
                throw DBusError(name: DBusError.disconnected, message: "\(description) closed the connection")
            }
            guard errno == EAGAIN || errno == EINTR else {
                throw DBusWireHandshake.failure("cannot read from \(description)", errno: errno)
            }
            try wait(for: POLLIN)
        }
    }

    private func wait(for events: Int32) throws(DBusError) {
        let left = deadline - ContinuousClock.now
        guard left > .zero else {
            throw DBusError(
                name: DBusError.noReply, message: "\(description) did not answer within \(DBusWireHandshake.timeout)")
        }
        var poller = pollfd(fd: socket, events: Int16(events), revents: 0)
        let milliseconds = left.components.seconds * 1000 + left.components.attoseconds / 1_000_000_000_000_000 + 1
        _ = poll(&poller, 1, Int32(min(milliseconds, Int64(Int32.max))))
    }
}

enum WireHex {
    private static let digits = Array("0123456789abcdef".utf8)

    static func two(_ byte: UInt8) -> String {
        String(decoding: [digits[Int(byte >> 4)], digits[Int(byte & 0x0F)]], as: UTF8.self)
    }

    static func random(bytes count: Int) -> String {
        var generator = SystemRandomNumberGenerator()
        return (0..<count).map { _ in two(UInt8.random(in: 0...255, using: &generator)) }.joined()
    }
}
