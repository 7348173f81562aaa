import Glibc
import Polling
import Synchronization
import TestWorld
import Testing

/// The loop against real sockets (socketpairs), timers and actors.
struct PollLoopTests {
    @Test func workRunsInSubmissionOrderOnTheLoopThread() async throws {
        let loop = try PollLoop(name: "test.order")
        let seen = Mutex<[Int]>([])
        let onLoop = Mutex<[Bool]>([])
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            for index in 0..<1000 {
                loop.execute {
                    seen.withLock { $0.append(index) }
                    onLoop.withLock { $0.append(loop.inLoop) }
                    if index == 999 { done.resume() }
                }
            }
        }
        #expect(seen.withLock { $0 } == Array(0..<1000))
        #expect(onLoop.withLock { $0.allSatisfy { $0 } })
        #expect(!loop.inLoop, "the test's own thread is not the loop")
    }

    @Test func workSubmittedFromTheLoopRunsAfterTheCurrentWorkNotInsideIt() async throws {
        let loop = try PollLoop(name: "test.nested")
        let order = Mutex<[String]>([])
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            loop.execute {
                loop.execute {
                    order.withLock { $0.append("inner") }
                    done.resume()
                }
                order.withLock { $0.append("outer") }
            }
        }
        #expect(order.withLock { $0 } == ["outer", "inner"])
    }

    @Test func aReadableSocketCallsItsHandlerAndAPausedOneDoesNot() async throws {
        let loop = try PollLoop(name: "test.watch")
        let (ours, theirs) = try Self.socketPair()
        defer { close(ours) }
        let reads = AsyncStream<[UInt8]>.makeStream()
        let watched = Descriptor()
        let watch = try await onLoop(loop) {
            let watch = try loop.watch(
                theirs,
                readable: {
                    var buffer = [UInt8](repeating: 0, count: 64)
                    let count = recv(watched.value, &buffer, buffer.count, Int32(MSG_DONTWAIT))
                    if count > 0 { reads.continuation.yield(Array(buffer[0..<count])) }
                }, writable: {})
            close(theirs)  // the watch reads its own duplicate
            watched.value = watch.fileDescriptor
            watch.setInterest(read: true, write: false)
            return watch
        }
        try Self.send(ours, [1, 2, 3])
        var iterator = reads.stream.makeAsyncIterator()
        #expect(await iterator.next() == [1, 2, 3])

        // Paused: the datagram stays in the socket until reading is on again.
        await onLoop(loop) { watch.setInterest(read: false, write: false) }
        try Self.send(ours, [4])
        let stillQueued = await onLoop(loop) { () -> Int32 in
            var queued: Int32 = 0
            _ = ioctl(watched.value, UInt(FIONREAD), &queued)
            return queued
        }
        #expect(stillQueued == 1, "a paused watch leaves the datagram unread")
        await onLoop(loop) { watch.setInterest(read: true, write: false) }
        #expect(await iterator.next() == [4])
        await onLoop(loop) { watch.cancel() }
    }

    @Test func aWritableSocketCallsItsHandlerOnlyWhileWriteInterestIsOn() async throws {
        let loop = try PollLoop(name: "test.write")
        let (ours, theirs) = try Self.socketPair()
        defer {
            close(ours)
            close(theirs)
        }
        let writable = AsyncStream<Void>.makeStream()
        let calls = Mutex(0)
        let watch = try await onLoop(loop) {
            let watch = try loop.watch(
                theirs, readable: {},
                writable: {
                    calls.withLock { $0 += 1 }
                    writable.continuation.yield()
                })
            watch.setInterest(read: false, write: true)
            return watch
        }
        var iterator = writable.stream.makeAsyncIterator()
        _ = await iterator.next()
        await onLoop(loop) { watch.setInterest(read: false, write: false) }
        let afterOff = calls.withLock { $0 }
        // A round trip through the loop: any event of the turns before has been handled.
        await onLoop(loop) {}
        await onLoop(loop) {}
        #expect(calls.withLock { $0 } == afterOff, "no write handler once the interest is off")
        await onLoop(loop) { watch.cancel() }
    }

    @Test func aHungUpSocketNobodyWatchesDoesNotSpinTheLoop() async throws {
        let loop = try PollLoop(name: "test.hup")
        let (ours, theirs) = try Self.socketPair()
        let calls = Mutex(0)
        let watch = try await onLoop(loop) {
            let watch = try loop.watch(theirs, readable: { calls.withLock { $0 += 1 } }, writable: {})
            // Read, then paused (as a client whose consumer is full does).
            watch.setInterest(read: true, write: false)
            watch.setInterest(read: false, write: false)
            return watch
        }
        close(theirs)
        close(ours)  // the peer hangs up: EPOLLHUP would be reported in every turn if the watch stayed registered
        let before = try ProcessThreads.cpuTicks(ofNamesStartingWith: "test.hup")
        try await Task.sleep(for: .milliseconds(300))
        let after = try ProcessThreads.cpuTicks(ofNamesStartingWith: "test.hup")
        #expect(calls.withLock { $0 } == 0, "no interest, no handler")
        #expect(after - before < 10, "the loop slept while nothing was wanted (\(after - before) ticks)")
        await onLoop(loop) { watch.cancel() }
    }

    @Test func cancellingAWatchClosesItsDuplicateAndKeepsTheOwnersDescriptor() async throws {
        let loop = try PollLoop(name: "test.cancel")
        let (ours, theirs) = try Self.socketPair()
        defer {
            close(ours)
            close(theirs)
        }
        let watch = try await onLoop(loop) { try loop.watch(theirs, readable: {}, writable: {}) }
        let duplicate = watch.fileDescriptor
        #expect(duplicate != theirs)
        await onLoop(loop) { watch.cancel() }
        // Tests run in parallel: the number may already be reused by another socket, but not by this one.
        #expect(
            fcntl(duplicate, F_GETFD) == -1 || Self.inode(of: duplicate) != Self.inode(of: theirs),
            "the duplicate is closed")
        #expect(fcntl(theirs, F_GETFD) != -1, "the owner's descriptor stays open")
    }

    @Test func aWatchCancelledByAnotherHandlerInTheSameTurnIsNotCalled() async throws {
        let loop = try PollLoop(name: "test.turn")
        let (oursA, theirsA) = try Self.socketPair()
        let (oursB, theirsB) = try Self.socketPair()
        defer { for fd in [oursA, theirsA, oursB, theirsB] { close(fd) } }
        let calls = AsyncStream<String>.makeStream()
        let watches = Mutex<[String: FileWatch]>([:])
        // Each handler drains its socket and cancels the other's watch: whichever runs first, the other is gone.
        let handler = { @Sendable (name: String, other: String) in
            let own = watches.withLock { $0[name]! }
            var buffer = [UInt8](repeating: 0, count: 16)
            _ = recv(own.fileDescriptor, &buffer, buffer.count, Int32(MSG_DONTWAIT))
            watches.withLock { $0[other]?.cancel() }
            calls.continuation.yield(name)
        }
        // Both sockets are readable before the loop first waits on either: one turn reports both.
        try Self.send(oursA, [1])
        try Self.send(oursB, [2])
        await onLoop(loop) {
            let a = try! loop.watch(theirsA, readable: { handler("a", "b") }, writable: {})
            let b = try! loop.watch(theirsB, readable: { handler("b", "a") }, writable: {})
            watches.withLock { $0 = ["a": a, "b": b] }
            a.setInterest(read: true, write: false)
            b.setInterest(read: true, write: false)
        }
        var iterator = calls.stream.makeAsyncIterator()
        let first = try #require(await iterator.next())
        // Later datagrams, the cancelled watch's socket's first: only the watch still there is called.
        let (cancelledSocket, keptSocket) = first == "a" ? (oursB, oursA) : (oursA, oursB)
        try Self.send(cancelledSocket, [3])
        try Self.send(keptSocket, [4])
        let second = try #require(await iterator.next())
        #expect(second == first, "only the watch that ran first is still called")
        await onLoop(loop) { watches.withLock { $0[first]?.cancel() } }
    }

    @Test func timersFireInDeadlineOrderAndACancelledOneNever() async throws {
        let loop = try PollLoop(name: "test.timers")
        let fired = AsyncStream<String>.makeStream()
        await onLoop(loop) {
            _ = loop.schedule(after: .milliseconds(60)) { fired.continuation.yield("late") }
            _ = loop.schedule(after: .milliseconds(20)) { fired.continuation.yield("early") }
            let cancelled = loop.schedule(after: .milliseconds(40)) { fired.continuation.yield("cancelled") }
            cancelled.cancel()
            _ = loop.schedule(after: .milliseconds(100)) { fired.continuation.finish() }
        }
        var names: [String] = []
        for await name in fired.stream { names.append(name) }
        #expect(names == ["early", "late"])
    }

    @Test func aRepeatingTimerRepeatsUntilCancelled() async throws {
        let loop = try PollLoop(name: "test.repeat")
        let ticks = AsyncStream<Int>.makeStream()
        let count = Mutex(0)
        let timer = await onLoop(loop) {
            loop.schedule(after: .milliseconds(5), repeating: .milliseconds(5)) {
                ticks.continuation.yield(
                    count.withLock {
                        $0 += 1
                        return $0
                    })
            }
        }
        var iterator = ticks.stream.makeAsyncIterator()
        for expected in 1...3 { #expect(await iterator.next() == expected) }
        await onLoop(loop) { timer.cancel() }
        let stopped = count.withLock { $0 }
        try await Task.sleep(for: .milliseconds(50))
        #expect(count.withLock { $0 } == stopped, "no tick after cancel")
    }

    @Test func anActorOnTheLoopRunsItsJobsOnTheLoopThread() async throws {
        let loop = try PollLoop(name: "test.actor")
        let counter = LoopCounter(loop: loop)
        for _ in 0..<100 { await counter.increment() }
        #expect(await counter.value == 100)
        #expect(await counter.ranOnLoop)
        let fromHandler = await withCheckedContinuation { (done: CheckedContinuation<Int, Never>) in
            loop.execute { done.resume(returning: counter.assumeIsolated { $0.value }) }
        }
        #expect(fromHandler == 100, "assumeIsolated works in plain loop work")
    }

    @Test func theLoopThreadEndsWhenTheLastReferenceGoes() async throws {
        let name = "test.end.\(UInt16.random(in: 0...UInt16.max))"
        var loop: PollLoop? = try PollLoop(name: name)
        await withCheckedContinuation { done in loop!.execute { done.resume() } }
        #expect(try ProcessThreads.names().contains(name))
        loop = nil
        #expect(try await ProcessThreads.end(name), "the loop's thread ended")
    }

    @Test func aWatchAndATimerKeptPastTheLoopLetItsThreadEndAndCancelThenDoesNothing() async throws {
        let name = "test.kept.\(UInt16.random(in: 0...UInt16.max))"
        let (ours, theirs) = try Self.socketPair()
        defer {
            close(ours)
            close(theirs)
        }
        var loop: PollLoop? = try PollLoop(name: name)
        let (watch, timer) = try await onLoop(loop!) { [loop] in
            let watch = try loop!.watch(theirs, readable: {}, writable: {})
            watch.setInterest(read: true, write: false)
            return (watch, loop!.schedule(after: .seconds(3600)) {})
        }
        loop = nil
        #expect(try await ProcessThreads.end(name), "the loop's thread ended although its watch and timer live")
        // Off the loop, after its end: no trap, nothing happens.
        watch.setInterest(read: true, write: true)
        watch.cancel()
        timer.cancel()
        #expect(
            fcntl(watch.fileDescriptor, F_GETFD) == -1
                || Self.inode(of: watch.fileDescriptor) != Self.inode(of: theirs),
            "the loop closed the watch's duplicate when it ended")
    }

    // MARK: Helpers

    /// Runs `body` on the loop thread and returns its result.
    private func onLoop<T: Sendable>(_ loop: PollLoop, _ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            loop.execute { continuation.resume(with: Result { try body() }) }
        }
    }

    private func onLoop<T: Sendable>(_ loop: PollLoop, _ body: @escaping @Sendable () -> T) async -> T {
        await withCheckedContinuation { continuation in loop.execute { continuation.resume(returning: body()) } }
    }

    static func socketPair() throws -> (Int32, Int32) {
        var fds: [Int32] = [-1, -1]
        guard socketpair(AF_UNIX, Int32(SOCK_SEQPACKET.rawValue), 0, &fds) == 0 else {
            throw PollTestError("socketpair: errno \(errno)")
        }
        return (fds[0], fds[1])
    }

    static func inode(of fd: Int32) -> UInt {
        var status = stat()
        return fstat(fd, &status) == 0 ? UInt(status.st_ino) : 0
    }

    static func send(_ fd: Int32, _ bytes: [UInt8]) throws {
        guard Glibc.send(fd, bytes, bytes.count, 0) == bytes.count else { throw PollTestError("send: errno \(errno)") }
    }
}

struct PollTestError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// A descriptor number set on the loop and read by the watch's handler, also on the loop.
final class Descriptor: @unchecked Sendable {
    var value: Int32 = -1
}

actor LoopCounter {
    let loop: PollLoop
    nonisolated var unownedExecutor: UnownedSerialExecutor { loop.asUnownedSerialExecutor() }
    var value = 0
    var ranOnLoop = true

    init(loop: PollLoop) { self.loop = loop }

    func increment() {
        value += 1
        if !loop.inLoop { ranOnLoop = false }
    }
}
