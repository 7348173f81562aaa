import TestWorld
import Testing

/// Pairing the simulator's sends with a relay's publishes, as `gattway-bench compare` does with `perf script`'s lines.
@Suite struct SyscallHopsTests {
    private static func hex(_ value: Int) -> String {
        let digits = String(value, radix: 16)
        return "0x" + String(repeating: "0", count: max(0, 8 - digits.count)) + digits
    }

    private static func send(_ time: Double, fd: Int = 9, length: Int = 12) -> String {
        "  2139  \(time): syscalls:sys_enter_sendto: fd: \(hex(fd)), buff: 0x7f1918eab800, len: \(hex(length)), "
            + "flags: 0x00004000, addr: 0x00000000, addr_len: 0x00000000"
    }

    private static func write(_ time: Double, fd: Int = 17, count: Int = 33) -> String {
        "  2153  \(time):  syscalls:sys_enter_write: fd: \(hex(fd)), buf: 0x7f660c013620, count: \(hex(count))"
    }

    private static func events(_ lines: [String]) -> [SyscallHops.Event] {
        lines.compactMap { SyscallHops.parse(Substring($0)) }
    }

    @Test func parsesSendsAndWritesAndNothingElse() {
        #expect(
            SyscallHops.parse(Substring(Self.send(21198.654851)))
                == SyscallHops.Event(pid: 2139, time: 21198.654851, call: "sendto", fd: 9, length: 12))
        #expect(
            SyscallHops.parse(Substring(Self.write(21198.655023)))
                == SyscallHops.Event(pid: 2153, time: 21198.655023, call: "write", fd: 17, length: 33))
        #expect(SyscallHops.parse("  2153  21198.655023:  syscalls:sys_enter_read: fd: 0x00000011, count: 0x21") == nil)
        #expect(SyscallHops.parse("garbage") == nil)
        #expect(SyscallHops.parse("  2153  21198.655023:  syscalls:sys_enter_write: fd: 0x00000011") == nil)
    }

    @Test func pairsTheKthSendWithTheKthPublishIgnoringOtherCalls() throws {
        let lines = [
            Self.send(1.000), Self.send(1.0001),  // a burst: two values before the relay woke
            Self.write(1.0002, fd: 9, count: 1),  // libmosquitto's byte to its socket pair
            Self.write(1.0003), Self.write(1.0005),
            Self.send(1.000_5, fd: 8, length: 180),  // a D-Bus message of the simulator's
            Self.write(1.0006, count: 80),  // another publication of the relay's
            Self.send(1.001), Self.write(1.0014),
        ]
        let latencies = try SyscallHops.latencies(of: Self.events(lines), sender: 2139, relay: 2153)
        #expect(latencies.count == 3)
        let expected = [0.0003, 0.0004, 0.0004]
        for (latency, want) in zip(latencies, expected) { #expect(abs(latency - want) < 1e-9) }
    }

    @Test func refusesStreamsThatDoNotPair() {
        // A value published before it was sent: the recording began with a value already in the relay.
        let early = [Self.write(0.9999), Self.send(1.000), Self.send(1.001), Self.write(1.0012)]
        #expect(throws: SyscallHops.PairingError.self) {
            try SyscallHops.latencies(of: Self.events(early), sender: 2139, relay: 2153)
        }
        // A value never published in the recording.
        let missing = [Self.send(1.000), Self.write(1.0002), Self.send(1.001)]
        #expect(throws: SyscallHops.PairingError.self) {
            try SyscallHops.latencies(of: Self.events(missing), sender: 2139, relay: 2153)
        }
        #expect(throws: SyscallHops.PairingError.self) {
            try SyscallHops.latencies(of: [], sender: 2139, relay: 2153)
        }
    }
}
