import Glibc
import MQTTCore
import Mosquitto
import Testing

/// The buffer of plain QoS 0 packets the client writes itself, against a socket pair: what is flushed arrives as
/// it was encoded, a full socket keeps the rest, and a lost link counts the packets it takes.
@Suite struct DirectPublishesTests {
    private func add(
        _ buffer: inout DirectPublishes, _ topic: String, _ payload: [UInt8], retain: Bool = false
    ) -> Bool {
        var topic = topic
        return topic.withUTF8 { topic in
            payload.withUnsafeBytes { buffer.add(topic: topic, payload: $0, retain: retain, version: .v5) }
        }
    }

    private func socketPair() throws -> (Int32, Int32) {
        var fds: [Int32] = [0, 0]
        try #require(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &fds) == 0)
        return (fds[0], fds[1])
    }

    private func readAll(_ socket: Int32) -> [UInt8] {
        var received: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65_536)
        while true {
            let count = chunk.withUnsafeMutableBytes { recv(socket, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
            guard count > 0 else { return received }
            received += chunk[..<count]
        }
    }

    @Test func aFlushWritesThePacketsInOrderInOneWrite() throws {
        let (mine, broker) = try socketPair()
        defer {
            close(mine)
            close(broker)
        }
        var buffer = DirectPublishes()
        #expect(add(&buffer, "a/state", [1, 2, 3]))
        #expect(add(&buffer, "a/advert", [4], retain: true))
        let expected = buffer.bytes
        #expect(buffer.unwritten == expected.count)
        #expect(buffer.flush(to: mine) == .drained)
        #expect(buffer.isEmpty && buffer.bytes.isEmpty)
        #expect(readAll(broker) == expected)
        #expect(
            expected == [0x30, 13, 0, 7] + Array("a/state".utf8) + [0, 1, 2, 3] + [0x31, 12, 0, 8]
                + Array("a/advert".utf8) + [0, 4])
    }

    @Test func whatTheBrokerCannotTakeIsLeftToTheMQTTLibrary() {
        var buffer = DirectPublishes()
        #expect(!add(&buffer, "caf\u{E9}/state", [1]), "not printable ASCII")
        #expect(!add(&buffer, "a/+/state", [1]), "a wildcard")
        buffer.maximumPacketSize = 12
        #expect(!add(&buffer, "a/state", [1, 2, 3]), "15 bytes, over the broker's Maximum Packet Size")
        #expect(add(&buffer, "a/s", [1, 2]))
        #expect(buffer.unwritten == 10)
    }

    @Test func withoutRetainAvailableTheRetainFlagIsCleared() {
        var buffer = DirectPublishes()
        buffer.retainAvailable = false
        #expect(add(&buffer, "t", [], retain: true))
        #expect(buffer.bytes.first == 0x30)
    }

    @Test func aFullSocketKeepsTheRestAndALostLinkCountsWhatItTook() throws {
        let (mine, broker) = try socketPair()
        defer {
            close(mine)
            close(broker)
        }
        var size: Int32 = 4_096
        setsockopt(mine, SOL_SOCKET, SO_SNDBUF, &size, socklen_t(MemoryLayout<Int32>.size))
        var buffer = DirectPublishes()
        let payload = [UInt8](repeating: 0x5A, count: 10_000)
        for _ in 0..<100 { #expect(add(&buffer, "big", payload)) }
        #expect(buffer.flush(to: mine) == .blocked)
        let written = buffer.written
        #expect(written > 0 && written < buffer.bytes.count)
        let whole = written / (payload.count + 9)
        #expect(buffer.discard() == 100 - whole, "packets not written in full")
        #expect(buffer.isEmpty && buffer.unwritten == 0)
    }

    @Test func aClosedPeerFailsTheFlushWithItsReason() throws {
        let (mine, broker) = try socketPair()
        defer { close(mine) }
        close(broker)
        var buffer = DirectPublishes()
        #expect(add(&buffer, "t", [1]))
        guard case .failed(let reason) = buffer.flush(to: mine) else {
            Issue.record("a flush to a closed peer did not fail")
            return
        }
        #expect(reason.contains("pipe"), "\(reason)")
    }
}
