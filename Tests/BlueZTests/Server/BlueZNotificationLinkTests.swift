import BluetoothCore
import Glibc
import Polling
import Synchronization
import Testing

@testable import BlueZ

/// Gattway's end of an AcquireNotify socket pair, against bluetoothd's end played by the test.
@Suite(.timeLimit(.minutes(1)))
struct BlueZNotificationLinkTests {
    /// Collects the link's events so a test can await one.
    final class Events: Sendable {
        private let stream: AsyncStream<GATTNotificationLinkEvent>
        let sink: AsyncStream<GATTNotificationLinkEvent>.Continuation

        init() { (stream, sink) = AsyncStream.makeStream(of: GATTNotificationLinkEvent.self) }

        func next(_ expected: GATTNotificationLinkEvent) async -> Bool {
            for await event in stream where event == expected { return true }
            return false
        }
    }

    private func receive(_ fd: Int32) -> [UInt8]? {
        var buffer = [UInt8](repeating: 0, count: 600)
        let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, 600, Int32(MSG_DONTWAIT)) }
        return count < 0 ? nil : Array(buffer[0..<count])
    }

    @Test func valuesGoOutOneDatagramEachAndAFullLinkSaysWhenItIsWritableAgain() async throws {
        let pair = try SeqPacketSocketPair()
        defer { close(pair.remote) }
        let link = BlueZNotificationLink(
            fd: pair.local, mtu: 23, device: "/org/bluez/hci0/dev_11", loop: try PollLoop(name: "test.link"))
        defer { link.close() }
        #expect(link.maximumValueLength == 20)
        let events = Events()
        link.start { events.sink.yield($0) }
        #expect(link.send([1, 2, 3]) == .sent)
        #expect(receive(pair.remote) == [1, 2, 3])
        var sent = 0
        while link.send([UInt8](repeating: 7, count: 20)) == .sent { sent += 1 }
        #expect(sent > 0)
        // bluetoothd reads again: the link becomes writable.
        while receive(pair.remote) != nil {}
        #expect(await events.next(.writable))
        #expect(link.send([9]) == .sent)
    }

    @Test func aConfirmationByteAndTheStacksCloseAreReported() async throws {
        let pair = try SeqPacketSocketPair()
        let link = BlueZNotificationLink(
            fd: pair.local, mtu: 64, device: nil, loop: try PollLoop(name: "test.link"))
        let events = Events()
        link.start { events.sink.yield($0) }
        var confirm: UInt8 = 0x01
        #expect(send(pair.remote, &confirm, 1, Int32(MSG_NOSIGNAL)) == 1)
        #expect(await events.next(.confirmed))
        close(pair.remote)
        #expect(await events.next(.closed))
        #expect(link.send([1]) == .closed)
    }

    /// Once Gattway lets go of a started link, bluetoothd's end reads its end (no watch keeps the socket open).
    @Test func closingTheLinkClosesItForTheStack() async throws {
        let pair = try SeqPacketSocketPair()
        defer { close(pair.remote) }
        let loop = try PollLoop(name: "test.link")
        let link = BlueZNotificationLink(fd: pair.local, mtu: 64, device: nil, loop: loop)
        let events = Events()
        link.start { events.sink.yield($0) }
        var confirm: UInt8 = 0x01
        #expect(send(pair.remote, &confirm, 1, Int32(MSG_NOSIGNAL)) == 1)
        #expect(await events.next(.confirmed))  // the watch is set up
        link.close()
        #expect(link.send([1]) == .closed)
        var pollDescriptor = pollfd(fd: pair.remote, events: Int16(POLLIN), revents: 0)
        #expect(poll(&pollDescriptor, 1, 10_000) == 1)
        var byte: UInt8 = 0
        #expect(recv(pair.remote, &byte, 1, Int32(MSG_DONTWAIT)) == 0)
    }

    /// The watch's handlers hold the link; closing it lets them go, so the link is released with its last owner.
    @Test func aClosedLinkIsReleased() async throws {
        let pair = try SeqPacketSocketPair()
        defer { close(pair.remote) }
        let loop = try PollLoop(name: "test.link")
        var link: BlueZNotificationLink? = BlueZNotificationLink(fd: pair.local, mtu: 64, device: nil, loop: loop)
        weak let released = link
        let events = Events()
        link!.start { events.sink.yield($0) }
        var confirm: UInt8 = 0x01
        #expect(send(pair.remote, &confirm, 1, Int32(MSG_NOSIGNAL)) == 1)
        #expect(await events.next(.confirmed))  // the watch is set up
        link!.close()
        link = nil
        // The watch is cancelled on the loop: wait for a turn after it.
        await withCheckedContinuation { done in loop.execute { done.resume() } }
        #expect(released == nil, "the closed link was not released")
    }
}
