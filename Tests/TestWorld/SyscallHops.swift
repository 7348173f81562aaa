/// The latency one relay adds to each value, read from the kernel's side: from the start of the system call that
/// hands a value to the relay (the simulator's `sendto` of it) to the end of the one that puts its MQTT PUBLISH in the
/// broker's socket (the relay's `write`), both stamped by `perf record -k CLOCK_MONOTONIC` on the `syscalls:*`
/// tracepoints.
///
/// Unlike the latency the benchmark's subscriber sees, this leaves out the broker, the subscriber and when the
/// simulator's stamp was taken, and it is measured the same way for every relay, with nothing built into any of them.
/// The relay's wake-up is included. A value that reaches the relay through dbus-daemon (a PropertiesChanged signal)
/// is sent to dbus-daemon, so its routing there is counted as well, alike for every relay.
///
/// A send is stamped at its start because the relay may read the value and publish it before the sender's call has
/// returned; it counts only when its end says it took bytes, so that a call the kernel refused (a full socket:
/// EAGAIN) and that was made again counts once.
package enum SyscallHops {
    /// The start or end of one system call, from `perf script -F pid,tid,time,event,trace`.
    package struct Event: Equatable, Sendable {
        package let pid: Int32
        package let thread: Int32
        /// Seconds (CLOCK_MONOTONIC).
        package let time: Double
        /// The system call: `sendto` or `write`.
        package let call: String
        /// The end's return value (bytes taken, or a negative errno); nil at the start.
        package let result: Int?

        package init(pid: Int32, thread: Int32, time: Double, call: String, result: Int?) {
            self.pid = pid
            self.thread = thread
            self.time = time
            self.call = call
            self.result = result
        }
    }

    /// A failure to pair the two streams, with what was seen.
    package struct PairingError: Error, CustomStringConvertible {
        package let description: String
    }

    /// Parses ` 2139/2139 21198.654851: syscalls:sys_exit_sendto: 0xc` and the starts
    /// (`syscalls:sys_enter_sendto: fd: …`) and ends of `sendto` and `write`; nil for any other line.
    package static func parse(_ line: Substring) -> Event? {
        let words = line.split(separator: " ", maxSplits: 4, omittingEmptySubsequences: true)
        guard words.count >= 3 else { return nil }
        let ids = words[0].split(separator: "/")
        guard ids.count == 2, let pid = Int32(ids[0]), let thread = Int32(ids[1]), words[1].hasSuffix(":"),
            let time = Double(words[1].dropLast())
        else { return nil }
        let call: String
        let entry: Bool
        switch words[2] {
        case "syscalls:sys_enter_sendto:": (call, entry) = ("sendto", true)
        case "syscalls:sys_exit_sendto:": (call, entry) = ("sendto", false)
        case "syscalls:sys_enter_write:": (call, entry) = ("write", true)
        case "syscalls:sys_exit_write:": (call, entry) = ("write", false)
        default: return nil
        }
        if entry { return Event(pid: pid, thread: thread, time: time, call: call, result: nil) }
        guard words.count == 4, words[3].hasPrefix("0x"), let bits = UInt64(words[3].dropFirst(2), radix: 16) else {
            return nil
        }
        return Event(pid: pid, thread: thread, time: time, call: call, result: Int(Int64(bitPattern: bits)))
    }

    /// The seconds each value spent in the relay, oldest first: the sender's most frequent size of completed
    /// `sendto` (the notifications) paired in order with the relay's most frequent size of `write` over one byte
    /// (the PUBLISH of a value; libmosquitto's one-byte writes to its own socket pair and other publications
    /// differ). The recording must hold whole values only: begun before the first was sent and ended after the last
    /// was written. Neither side loses or reorders a value, so the k-th send is then the k-th write; a count that
    /// differs, or a value that leaves before it arrived, is an error.
    package static func latencies(of events: [Event], sender: Int32, relay: Int32) throws(PairingError) -> [Double] {
        let sends = mostFrequent(completedSends(events.filter { $0.pid == sender && $0.call == "sendto" }))
        let writes = mostFrequent(
            events.filter { $0.pid == relay && $0.call == "write" }.compactMap { event in
                event.result.flatMap { $0 > 1 ? (event.time, $0) : nil }
            })
        guard !sends.isEmpty, sends.count == writes.count else {
            throw PairingError(description: "recorded \(sends.count) values sent but \(writes.count) published")
        }
        let latencies = zip(sends, writes).map { $1 - $0 }
        if let early = latencies.firstIndex(where: { $0 < 0 }) {
            throw PairingError(description: "value \(early) was published before it was sent: the streams do not pair")
        }
        return latencies
    }

    /// Each call that took bytes: its start's time and its end's result (a thread makes one call at a time).
    private static func completedSends(_ events: [Event]) -> [(Double, Int)] {
        var started: [Int32: Double] = [:]
        var sends: [(Double, Int)] = []
        for event in events.sorted(by: { $0.time < $1.time }) {
            if let result = event.result {
                if let start = started.removeValue(forKey: event.thread), result > 0 { sends.append((start, result)) }
            } else {
                started[event.thread] = event.time
            }
        }
        return sends
    }

    /// The times of the calls of the most frequent result, in order.
    private static func mostFrequent(_ calls: [(time: Double, result: Int)]) -> [Double] {
        var counts: [Int: Int] = [:]
        for call in calls { counts[call.result, default: 0] += 1 }
        guard let top = counts.max(by: { $0.value < $1.value })?.key else { return [] }
        return calls.filter { $0.result == top }.map(\.time).sorted()
    }
}
