import TestWorld
import Testing

/// Pairing the simulator's sends with a relay's publishes, as `gattway-bench compare` does with `perf script`'s lines.
@Suite struct SyscallHopsTests {
    private static func hex(_ value: Int) -> String {
        "0x" + String(UInt64(bitPattern: Int64(value)), radix: 16)
    }

    /// The start and end of one sendto by the simulator.
    private static func send(_ start: Double, _ end: Double, result: Int = 12) -> [String] {
        [
            " 2139/2139 \(start): syscalls:sys_enter_sendto: fd: 0x00000009, buff: 0x7f1918eab800, len: \(hex(max(result, 12))), flags: 0x00004000, addr: 0x00000000, addr_len: 0x00000000",
            " 2139/2139 \(end): syscalls:sys_exit_sendto: \(hex(result))",
        ]
    }

    /// The start and end (at `time`) of one write by the relay.
    private static func write(_ time: Double, result: Int = 33) -> [String] {
        [
            " 2153/2157 \(time - 0.000_002):  syscalls:sys_enter_write: fd: 0x00000011, buf: 0x7f660c013620, count: \(hex(max(result, 1)))",
            " 2153/2157 \(time):  syscalls:sys_exit_write: \(hex(result))",
        ]
    }

    private static func events(_ lines: [[String]]) -> [SyscallHops.Event] {
        lines.joined().compactMap { SyscallHops.parse(Substring($0)) }
    }

    @Test func parsesStartsAndEndsOfSendsAndWritesAndNothingElse() {
        #expect(
            SyscallHops.parse(Substring(Self.send(21198.654851, 21198.654861)[1]))
                == SyscallHops.Event(pid: 2139, thread: 2139, time: 21198.654861, call: "sendto", result: 12))
        #expect(
            SyscallHops.parse(Substring(Self.send(21198.654851, 21198.654861)[0]))
                == SyscallHops.Event(pid: 2139, thread: 2139, time: 21198.654851, call: "sendto", result: nil))
        #expect(
            SyscallHops.parse(" 2153/2157 21198.655023:  syscalls:sys_exit_write: 0xfffffffffffffff5")
                == SyscallHops.Event(pid: 2153, thread: 2157, time: 21198.655023, call: "write", result: -11))
        #expect(
            SyscallHops.parse(" 9/9 1.5: syscalls:sys_exit_sendmsg: 0x98")
                == SyscallHops.Event(pid: 9, thread: 9, time: 1.5, call: "sendmsg", result: 152))
        #expect(SyscallHops.parse(" 2153/2157 21198.655023:  syscalls:sys_exit_read: 0x21") == nil)
        #expect(SyscallHops.parse(" 2153/2157 21198.655023:  syscalls:sys_exit_sendmmsg: 0x2") == nil)
        #expect(SyscallHops.parse(" 2153 21198.655023:  syscalls:sys_exit_write: 0x21") == nil)
        #expect(SyscallHops.parse("garbage") == nil)
    }

    @Test func pairsTheStartOfTheKthSendWithTheEndOfTheKthPublish() throws {
        let lines = [
            // A burst: two values before the relay woke; the relay published the first before the second send ended.
            Self.send(1.000, 1.000_05), Self.send(1.0001, 1.000_35),
            Self.write(1.0002, result: 1),  // libmosquitto's byte to its socket pair
            Self.write(1.0003), Self.write(1.0005),
            Self.send(1.000_5, 1.000_51, result: 180),  // a D-Bus message of the simulator's
            Self.write(1.0006, result: 80),  // another publication of the relay's
            Self.send(1.0009, 1.000_91, result: -11),  // refused (EAGAIN), then sent again
            Self.send(1.001, 1.001_01), Self.write(1.0012, result: -11), Self.write(1.0014),
        ]
        let latencies = try SyscallHops.latencies(of: Self.events(lines), sender: 2139, relay: 2153)
        #expect(latencies.count == 3)
        let expected = [0.0003, 0.0004, 0.0004]
        for (latency, want) in zip(latencies, expected) { #expect(abs(latency - want) < 1e-9) }
    }

    /// Gattway writes a loop turn's publishes in one `send`: a call of two packets' size hands on two values at its
    /// end, even where such calls outnumber those of one packet.
    @Test func aCallOfSeveralPacketsHandsOnAsManyValues() throws {
        func publish(_ time: Double, packets: Int) -> [String] {
            [
                " 2153/2157 \(time - 0.000_002):  syscalls:sys_enter_sendto: fd: 0x00000011, buff: 0x7f66, len: \(Self.hex(40 * packets)), flags: 0x00004040",
                " 2153/2157 \(time):  syscalls:sys_exit_sendto: \(Self.hex(40 * packets))",
            ]
        }
        let lines = [
            Self.send(1.000, 1.000_01), Self.send(1.000_1, 1.000_11), publish(1.0003, packets: 2),
            Self.send(1.001, 1.001_01), Self.send(1.001_1, 1.001_11), publish(1.0013, packets: 2),
            Self.send(1.002, 1.002_01), publish(1.0022, packets: 1),
            Self.write(1.0025, result: 2),  // a PINGREQ of libmosquitto's
        ]
        let latencies = try SyscallHops.latencies(of: Self.events(lines), sender: 2139, relay: 2153)
        let expected = [0.0003, 0.0002, 0.0003, 0.0002, 0.0002]
        #expect(latencies.count == expected.count)
        for (latency, want) in zip(latencies, expected) { #expect(abs(latency - want) < 1e-9) }
    }

    @Test func pairsTheBrokersWritesWithAPeripheralsSends() throws {
        // The peripheral's path: the broker writes each PUBLISH; the peripheral sends each notification.
        func broker(_ start: Double) -> [String] {
            [
                " 7/7 \(start): syscalls:sys_enter_write: fd: 0x0000000b, buf: 0x55d0, count: 0x00000023",
                " 7/7 \(start + 0.000_01): syscalls:sys_exit_write: 0x23",
            ]
        }
        func peripheral(_ end: Double) -> [String] {
            [
                " 8/9 \(end - 0.000_01): syscalls:sys_enter_sendmsg: fd: 0x0000000c, msg: 0x7ffd, flags: 0x00004040",
                " 8/9 \(end): syscalls:sys_exit_sendmsg: 0x98",
            ]
        }
        let lines = [broker(2.0), peripheral(2.0002), broker(2.001), peripheral(2.0015)]
        let latencies = try SyscallHops.latencies(of: Self.events(lines), sender: 7, relay: 8)
        #expect(latencies.count == 2)
        for (latency, want) in zip(latencies, [0.0002, 0.0005]) { #expect(abs(latency - want) < 1e-9) }
    }

    @Test func refusesStreamsThatDoNotPair() {
        // A value published before it was sent: the recording began with a value already in the relay.
        let early = [Self.write(0.9999), Self.send(1.000, 1.000_01), Self.send(1.001, 1.001_01), Self.write(1.0012)]
        #expect(throws: SyscallHops.PairingError.self) {
            try SyscallHops.latencies(of: Self.events(early), sender: 2139, relay: 2153)
        }
        // A value never published in the recording.
        let missing = [Self.send(1.000, 1.000_01), Self.write(1.0002), Self.send(1.001, 1.001_01)]
        #expect(throws: SyscallHops.PairingError.self) {
            try SyscallHops.latencies(of: Self.events(missing), sender: 2139, relay: 2153)
        }
        #expect(throws: SyscallHops.PairingError.self) {
            try SyscallHops.latencies(of: [], sender: 2139, relay: 2153)
        }
    }
}
