import BlueZ
import Glibc
import Polling
import Testing

/// NotificationSocket against a real SOCK_SEQPACKET socketpair, made the way bluetoothd makes AcquireNotify's.
@Suite(.timeLimit(.minutes(1)))
struct NotificationSocketTests {
    /// The two ends: `ours` plays bluetoothd, `theirs` is handed to the reader.
    private static func socketPair() throws -> (ours: Int32, theirs: Int32) {
        var fds: [Int32] = [-1, -1]
        let result = socketpair(AF_UNIX, Int32(SOCK_SEQPACKET.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0, &fds)
        try #require(result == 0, "socketpair: errno \(errno)")
        return (fds[0], fds[1])
    }

    private static func send(_ fd: Int32, _ value: [UInt8]) throws {
        let sent = value.withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        try #require(sent == value.count, "send: errno \(errno)")
    }

    @Test func anEmptyDatagramIsAValueAndReadingContinues() async throws {
        let (ours, theirs) = try Self.socketPair()
        defer { close(ours) }
        let (socket, batches) = try NotificationSocket.streaming(fd: theirs, mtu: 23)
        defer { socket.close() }
        var iterator = batches.makeAsyncIterator()
        try Self.send(ours, [])
        let first = try #require(await iterator.next())
        #expect(first == [[]])
        try Self.send(ours, [0x01, 0x02])
        let second = try #require(await iterator.next())
        #expect(second == [[0x01, 0x02]])
        #expect(socket.currentCounters.received == 2)
    }

    @Test func anEmptyDatagramBetweenValuesKeepsItsPlace() async throws {
        let (ours, theirs) = try Self.socketPair()
        defer { close(ours) }
        // Queued before the reader starts, so that one readable event sees all three.
        try Self.send(ours, [0x0A])
        try Self.send(ours, [])
        try Self.send(ours, [0x0B])
        let (socket, batches) = try NotificationSocket.streaming(fd: theirs, mtu: 23)
        defer { socket.close() }
        var received: [[UInt8]] = []
        for await batch in batches {
            received += batch
            if received.count >= 3 { break }
        }
        #expect(received == [[0x0A], [], [0x0B]])
    }

    @Test func valuesQueuedBeforeAHangUpAllArriveBeforeTheEnd() async throws {
        let (ours, theirs) = try Self.socketPair()
        // One read takes them all with the end of file behind them: the empty value has bytes after it, so it is a
        // value, not the end.
        try Self.send(ours, [])
        try Self.send(ours, [0x0C])
        close(ours)
        let (socket, batches) = try NotificationSocket.streaming(fd: theirs, mtu: 23)
        var received: [[UInt8]] = []
        for await batch in batches { received += batch }
        #expect(received == [[], [0x0C]])
        #expect(socket.isClosed)
    }

    @Test func moreThanOneReadsWorthArrivesWholeAndInOrder() async throws {
        let (ours, theirs) = try Self.socketPair()
        defer { close(ours) }
        let values = (0..<100).map { [UInt8($0), UInt8(255 - $0)] }
        for value in values { try Self.send(ours, value) }
        let (socket, batches) = try NotificationSocket.streaming(fd: theirs, mtu: 23)
        defer { socket.close() }
        var received: [[UInt8]] = []
        var largest = 0
        for await batch in batches {
            received += batch
            largest = max(largest, batch.count)
            if received.count >= values.count { break }
        }
        #expect(received == values)
        #expect(largest > 1, "a burst is handed on in batches, not one value at a time")
    }

    @Test func thePeerHangingUpEndsTheStreamAndCallsOnClose() async throws {
        let (ours, theirs) = try Self.socketPair()
        let closed = AsyncStream<Bool>.makeStream()
        let socket = NotificationSocket(
            fd: theirs, mtu: 23, loop: try PollLoop(name: "test.notify"), onBatch: { _ in true },
            onClose: { hungUp in
                closed.continuation.yield(hungUp)
                closed.continuation.finish()
            })
        try Self.send(ours, [0x01])
        close(ours)
        var events = closed.stream.makeAsyncIterator()
        let hungUp: Bool? = await events.next()
        #expect(hungUp == true, "a hang-up by the peer is reported as one")
        _ = socket
    }

    @Test func closingOurEndIsNotReportedAsAHangUp() async throws {
        let (ours, theirs) = try Self.socketPair()
        defer { close(ours) }
        let closed = AsyncStream<Bool>.makeStream()
        let socket = NotificationSocket(
            fd: theirs, mtu: 23, loop: try PollLoop(name: "test.notify"), onBatch: { _ in true },
            onClose: { hungUp in
                closed.continuation.yield(hungUp)
                closed.continuation.finish()
            })
        socket.close()
        var events = closed.stream.makeAsyncIterator()
        let hungUp: Bool? = await events.next()
        #expect(hungUp == false, "a close by Gattway itself is not reported as a hang-up")
    }

    /// A socket dropped without `close()` still ends the session, and its descriptor is closed exactly once: a
    /// descriptor opened afterwards (which may reuse the number) survives the loop's own end.
    @Test func aSocketReleasedWithoutCloseIsClosedOnce() async throws {
        let (ours, theirs) = try Self.socketPair()
        defer { close(ours) }
        var loop: PollLoop? = try PollLoop(name: "test.release")
        let batches = AsyncStream<Int>.makeStream()
        var socket: NotificationSocket? = NotificationSocket(
            fd: theirs, mtu: 23, loop: loop!,
            onBatch: { batch in
                batches.continuation.yield(batch.count)
                return true
            })
        try Self.send(ours, [0x01])
        var iterator = batches.stream.makeAsyncIterator()
        #expect(await iterator.next() == 1, "the reader is watching")
        socket = nil
        // bluetoothd's end sees the session end.
        var descriptor = pollfd(fd: ours, events: Int16(POLLIN), revents: 0)
        #expect(poll(&descriptor, 1, 10_000) == 1 && descriptor.revents & Int16(POLLHUP) != 0)
        var pipes: [[Int32]] = []
        for _ in 0..<8 {
            var pair: [Int32] = [-1, -1]
            try #require(pipe(&pair) == 0)
            pipes.append(pair)
        }
        defer {
            for pair in pipes {
                close(pair[0])
                close(pair[1])
            }
        }
        loop = nil
        // The loop's thread ends on its own; give it time to close what it still watches.
        for _ in 0..<50 {
            for pair in pipes {
                #expect(fcntl(pair[0], F_GETFD) >= 0 && fcntl(pair[1], F_GETFD) >= 0, "pipe \(pair) was closed")
            }
            try await Task.sleep(for: .milliseconds(20))
        }
        _ = socket
    }
}
