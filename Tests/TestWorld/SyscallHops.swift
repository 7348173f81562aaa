/// The latency one relay adds to each value, read from the kernel's side: the time from the system call that hands a
/// value to the relay (the simulator's `sendto` of a notification) to the one with which the relay hands it on (its
/// `write` of the MQTT PUBLISH to the broker's socket), both stamped by `perf record -k CLOCK_MONOTONIC` on the
/// `syscalls:sys_enter_*` tracepoints.
///
/// Unlike the latency the benchmark's subscriber sees, this leaves out the broker, the subscriber and when the
/// simulator's stamp was taken, and it is measured the same way for every relay, with nothing built into any of them.
/// The relay's wake-up is included: the value is in its socket from the sender's system call on. A value that
/// reaches the relay through dbus-daemon (a PropertiesChanged signal) is sent to dbus-daemon, so its routing there
/// is counted as well, alike for every relay.
package enum SyscallHops {
    /// One system call entry from `perf script -F pid,time,event,trace`.
    package struct Event: Equatable, Sendable {
        package let pid: Int32
        /// Seconds (CLOCK_MONOTONIC).
        package let time: Double
        /// The system call: `sendto` or `write`.
        package let call: String
        package let fd: Int
        /// Bytes handed to the call (`len` of sendto, `count` of write).
        package let length: Int

        package init(pid: Int32, time: Double, call: String, fd: Int, length: Int) {
            self.pid = pid
            self.time = time
            self.call = call
            self.fd = fd
            self.length = length
        }
    }

    /// A failure to pair the two streams, with what was seen.
    package struct PairingError: Error, CustomStringConvertible {
        package let description: String
    }

    /// Parses `  2139  21198.654851: syscalls:sys_enter_sendto: fd: 0x00000009, buff: 0x7f19…, len: 0x0000000c, …`
    /// (and the same for `sys_enter_write` with `count:`); nil for any other line.
    package static func parse(_ line: Substring) -> Event? {
        let words = line.split(separator: " ", omittingEmptySubsequences: true)
        guard words.count >= 5, let pid = Int32(words[0]), words[1].hasSuffix(":"),
            let time = Double(words[1].dropLast())
        else { return nil }
        let call: String
        switch words[2] {
        case "syscalls:sys_enter_sendto:": call = "sendto"
        case "syscalls:sys_enter_write:": call = "write"
        default: return nil
        }
        guard let fd = field("fd:", in: words), let length = field(call == "write" ? "count:" : "len:", in: words)
        else { return nil }
        return Event(pid: pid, time: time, call: call, fd: fd, length: length)
    }

    /// The hexadecimal value after `name` (`0x0000000c,` → 12).
    private static func field(_ name: Substring, in words: [Substring]) -> Int? {
        guard let index = words.firstIndex(of: name), index + 1 < words.count else { return nil }
        var value = words[index + 1]
        if value.hasSuffix(",") { value = value.dropLast() }
        guard value.hasPrefix("0x") else { return nil }
        return Int(value.dropFirst(2), radix: 16)
    }

    /// The seconds each value spent in the relay, oldest first: the sender's most frequent kind of call (`sendto` of
    /// one length on one descriptor: the notifications) paired in order with the relay's most frequent `write` of
    /// more than one byte (one length on one descriptor: the PUBLISH of a value; libmosquitto's one-byte writes to
    /// its own socket pair and other publications differ). The recording must hold whole values only: begun before
    /// the first was sent and ended after the last was written. Neither side loses or reorders a value, so the k-th
    /// send is then the k-th write; a count that differs, or a value that leaves before it arrived, is an error.
    package static func latencies(of events: [Event], sender: Int32, relay: Int32) throws(PairingError) -> [Double] {
        let sends = mostFrequent(events.filter { $0.pid == sender && $0.call == "sendto" })
        let writes = mostFrequent(events.filter { $0.pid == relay && $0.call == "write" && $0.length > 1 })
        guard !sends.isEmpty, sends.count == writes.count else {
            throw PairingError(description: "recorded \(sends.count) values sent but \(writes.count) published")
        }
        let latencies = zip(sends, writes).map { $1 - $0 }
        if let early = latencies.firstIndex(where: { $0 < 0 }) {
            throw PairingError(description: "value \(early) was published before it was sent: the streams do not pair")
        }
        return latencies
    }

    /// The times of the most frequent (descriptor, length) among `events`, in order.
    private static func mostFrequent(_ events: [Event]) -> [Double] {
        var counts: [[Int]: Int] = [:]
        for event in events { counts[[event.fd, event.length], default: 0] += 1 }
        guard let top = counts.max(by: { $0.value < $1.value })?.key else { return [] }
        return events.filter { $0.fd == top[0] && $0.length == top[1] }.map(\.time).sorted()
    }
}
