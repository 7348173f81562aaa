/// The latency one relay adds to each value, read from the kernel's side: from the start of the system call that
/// hands a value to the relay (the simulator's `sendto` of a notification; on the peripheral's path the broker's
/// `write` of a PUBLISH) to the end of the one with which the relay hands it on (its `write` of the MQTT PUBLISH;
/// the peripheral's send of the notification), both stamped by `perf record -k CLOCK_MONOTONIC` on the `syscalls:*`
/// tracepoints of `write`, `sendto` and `sendmsg`.
///
/// Unlike the latency the benchmark's subscriber sees, this leaves out the broker, the subscriber and when the
/// simulator's stamp was taken, and it is measured the same way for every relay, with nothing built into any of them.
/// The relay's wake-up is included. A value that reaches the relay through dbus-daemon (a PropertiesChanged signal)
/// is sent to dbus-daemon, so its routing there is counted as well, alike for every relay.
///
/// A send is stamped at its start because the relay may read the value and hand it on before the sender's call has
/// returned. A call counts only when its end says it took bytes, so that one the kernel refused (a full socket:
/// EAGAIN) and that was made again counts once.
package enum SyscallHops {
    /// The start or end of one system call, from `perf script -F pid,tid,time,event,trace`.
    package struct Event: Equatable, Sendable {
        package let pid: Int32
        package let thread: Int32
        /// Seconds (CLOCK_MONOTONIC).
        package let time: Double
        /// The system call: `write`, `sendto` or `sendmsg`.
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

    /// The calls followed.
    package static let calls = ["write", "sendto", "sendmsg"]

    /// Parses ` 2139/2139 21198.654851: syscalls:sys_exit_sendto: 0xc` and the starts
    /// (`syscalls:sys_enter_sendto: fd: …`) and ends of every call in `calls`; nil for any other line.
    package static func parse(_ line: Substring) -> Event? {
        let words = line.split(separator: " ", maxSplits: 4, omittingEmptySubsequences: true)
        guard words.count >= 3 else { return nil }
        let ids = words[0].split(separator: "/")
        guard ids.count == 2, let pid = Int32(ids[0]), let thread = Int32(ids[1]), words[1].hasSuffix(":"),
            let time = Double(words[1].dropLast())
        else { return nil }
        let tracepoint = words[2]
        guard tracepoint.hasPrefix("syscalls:sys_"), tracepoint.hasSuffix(":") else { return nil }
        let name = tracepoint.dropFirst("syscalls:sys_".count).dropLast()
        let entry = name.hasPrefix("enter_")
        guard entry || name.hasPrefix("exit_") else { return nil }
        let call = String(name.drop { $0 != "_" }.dropFirst())
        guard calls.contains(call) else { return nil }
        if entry { return Event(pid: pid, thread: thread, time: time, call: call, result: nil) }
        guard words.count == 4, words[3].hasPrefix("0x"), let bits = UInt64(words[3].dropFirst(2), radix: 16) else {
            return nil
        }
        return Event(pid: pid, thread: thread, time: time, call: call, result: Int(Int64(bitPattern: bits)))
    }

    /// The seconds each value spent in the relay, oldest first: the sender's most frequent kind of completed call
    /// (one call, one size: the values), each at its start, paired in order with the relay's calls that hand them
    /// on, each at its end. A relay hands values on one per call (the C programs, libmosquitto) or several in one
    /// (Gattway writes a loop turn's publishes in one `send`): the relay's calls of one kind whose sizes are whole
    /// multiples of one value's packet carry that many values each, and the packet's size is the one for which they
    /// account for every value sent (tried first: the size of the relay's most frequent kind of call; libmosquitto's
    /// one-byte writes to its own socket pair and other messages differ). The recording must hold whole values only:
    /// begun before the first was sent and ended after the last was handed on. Neither side loses or reorders a
    /// value, so the k-th send is then the k-th hand-on; a count that differs, or a value that leaves before it
    /// arrived, is an error.
    package static func latencies(of events: [Event], sender: Int32, relay: Int32) throws(PairingError) -> [Double] {
        let sends = mostFrequent(completedCalls(events.filter { $0.pid == sender }).map { ($0.start, $0.kind) })
        let handedOn = handOns(completedCalls(events.filter { $0.pid == relay }), count: sends.count)
        guard !sends.isEmpty, sends.count == handedOn.count else {
            throw PairingError(description: "recorded \(sends.count) values sent but \(handedOn.count) handed on")
        }
        let latencies = zip(sends, handedOn).map { $1 - $0 }
        if let early = latencies.firstIndex(where: { $0 < 0 }) {
            throw PairingError(description: "value \(early) was handed on before it was sent: the streams do not pair")
        }
        return latencies
    }

    /// The end of the call that handed on each value, one entry per value, when some packet size accounts for
    /// `count` values (see `latencies`); otherwise those of the most frequent kind of call, one value each.
    private static func handOns(_ calls: [Completed], count: Int) -> [Double] {
        let kinds = Dictionary(grouping: calls, by: \.kind)
        guard let top = kinds.max(by: { $0.value.count < $1.value.count })?.value[0] else { return [] }
        let units = [top] + kinds.values.map { $0[0] }.sorted { $0.size < $1.size }
        for unit in units {
            let carrying = calls.filter { $0.call == unit.call && $0.size % unit.size == 0 }
            guard carrying.reduce(0, { $0 + $1.size / unit.size }) == count else { continue }
            return carrying.flatMap { Array(repeating: $0.end, count: $0.size / unit.size) }.sorted()
        }
        return calls.filter { $0.kind == top.kind }.map(\.end).sorted()
    }

    /// A call that took more than one byte: when it started and ended, the call, the bytes it took, and its kind
    /// (the call and its size).
    private struct Completed {
        let start: Double
        let end: Double
        let call: String
        let size: Int
        var kind: String { "\(call) \(size)" }
    }

    /// Each call that took more than one byte (a thread makes one call at a time).
    private static func completedCalls(_ events: [Event]) -> [Completed] {
        var started: [Int32: (time: Double, call: String)] = [:]
        var calls: [Completed] = []
        for event in events.sorted(by: { $0.time < $1.time }) {
            guard let result = event.result else {
                started[event.thread] = (event.time, event.call)
                continue
            }
            if let start = started.removeValue(forKey: event.thread), start.call == event.call, result > 1 {
                calls.append(Completed(start: start.time, end: event.time, call: event.call, size: result))
            }
        }
        return calls
    }

    /// The times of the calls of the most frequent kind, in order.
    private static func mostFrequent(_ calls: [(time: Double, kind: String)]) -> [Double] {
        var counts: [String: Int] = [:]
        for call in calls { counts[call.kind, default: 0] += 1 }
        guard let top = counts.max(by: { $0.value < $1.value })?.key else { return [] }
        return calls.filter { $0.kind == top }.map(\.time).sorted()
    }
}
