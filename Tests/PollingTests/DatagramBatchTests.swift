import Glibc
import Polling
import Testing

/// DatagramBatch against a real SOCK_SEQPACKET socketpair.
struct DatagramBatchTests {
    private static func socketPair() throws -> (Int32, Int32) {
        var fds: [Int32] = [-1, -1]
        let result = socketpair(AF_UNIX, Int32(SOCK_SEQPACKET.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0, &fds)
        try #require(result == 0, "socketpair: errno \(errno)")
        return (fds[0], fds[1])
    }

    private static func send(_ fd: Int32, _ value: [UInt8]) throws {
        let sent = value.withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        try #require(sent == value.count, "send: errno \(errno)")
    }

    private static func contents(_ batch: DatagramBatch) -> [[UInt8]] {
        (0..<batch.count).map { Array(batch.datagram(at: $0)) }
    }

    @Test func anEmptySocketReadsAsEAGAIN() throws {
        let (writer, reader) = try Self.socketPair()
        defer {
            close(writer)
            close(reader)
        }
        let batch = DatagramBatch(capacity: 4, datagramSize: 8)
        #expect(batch.receive(from: reader) == nil)
        #expect(errno == EAGAIN)
        #expect(batch.count == 0)
    }

    @Test func oneCallReadsUpToCapacityInOrderAndTheRestNext() throws {
        let (writer, reader) = try Self.socketPair()
        defer {
            close(writer)
            close(reader)
        }
        let values: [[UInt8]] = [[1], [], [2, 3], [4, 5, 6], [7], [8, 9]]
        for value in values { try Self.send(writer, value) }
        let batch = DatagramBatch(capacity: 4, datagramSize: 8)
        #expect(batch.receive(from: reader) == 4)
        #expect(Self.contents(batch) == Array(values[0..<4]))
        #expect(batch.receive(from: reader) == 2)
        #expect(Self.contents(batch) == Array(values[4...]))
        #expect(batch.receive(from: reader) == nil)
    }

    @Test func aLongerDatagramIsCutToTheSlotSize() throws {
        let (writer, reader) = try Self.socketPair()
        defer {
            close(writer)
            close(reader)
        }
        try Self.send(writer, Array(1...20))
        try Self.send(writer, [42])
        let batch = DatagramBatch(capacity: 2, datagramSize: 8)
        #expect(batch.receive(from: reader) == 2)
        #expect(Self.contents(batch) == [Array(1...8), [42]])
    }

    @Test func theEndOfFileReadsAsEmptyDatagramsAfterWhatWasQueued() throws {
        let (writer, reader) = try Self.socketPair()
        defer { close(reader) }
        try Self.send(writer, [7])
        close(writer)
        let batch = DatagramBatch(capacity: 3, datagramSize: 8)
        #expect(batch.receive(from: reader) == 3)
        #expect(Self.contents(batch) == [[7], [], []])
    }
}
