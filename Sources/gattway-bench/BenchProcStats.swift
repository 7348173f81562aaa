import Foundation

/// CPU time of a process (its CPU-time clock), its memory and wake-ups (from /proc), and the monotonic clock the
/// simulator stamps values with.
enum BenchProcStats {
    /// CPU time of all of `pid`'s threads, those that ended included, in seconds; nil when the process is gone.
    /// It is the scheduler's own count in nanoseconds (the process's CPU-time clock), where /proc/PID/stat's utime
    /// and stime are rounded to 10 ms ticks: about 22 ticks in a 30 s window at 100 advertisements/s, so ±5 % from
    /// rounding alone.
    static func cpuSeconds(pid: Int32) -> Double? {
        var clock = clockid_t()
        guard clock_getcpuclockid(pid, &clock) == 0 else { return nil }
        var now = timespec()
        guard clock_gettime(clock, &now) == 0 else { return nil }
        return Double(now.tv_sec) + Double(now.tv_nsec) / 1e9
    }

    /// Voluntary context switches of all of `pid`'s threads (each is a sleep that a wake-up ended): summed over
    /// /proc/PID/task/*/status, since a process's own status line counts its main thread only. Threads that ended
    /// are not counted. Nil when the process is gone.
    static func voluntarySwitches(pid: Int32) -> Int? {
        guard let threads = try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task") else {
            return nil
        }
        var total = 0
        for thread in threads {
            guard let text = try? String(contentsOfFile: "/proc/\(pid)/task/\(thread)/status", encoding: .utf8)
            else { continue }
            for line in text.split(separator: "\n") where line.hasPrefix("voluntary_ctxt_switches:") {
                total += line.split(separator: "\t").last.flatMap { Int($0.trimmingCharacters(in: .whitespaces)) } ?? 0
            }
        }
        return total
    }

    /// (after − before) ÷ values, NaN when a count is missing or no value arrived.
    static func perValue(_ before: Int?, _ after: Int?, values: Int) -> Double {
        guard let before, let after, values > 0 else { return .nan }
        return Double(after - before) / Double(values)
    }

    /// A `kB` field of /proc/PID/status (e.g. "VmHWM") in bytes.
    static func statusBytes(pid: Int32, field: String) -> Int? {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8) else { return nil }
        for line in text.split(separator: "\n") where line.hasPrefix(field + ":") {
            return line.split(separator: " ").dropFirst().first.flatMap { Int($0) }.map { $0 * 1024 }
        }
        return nil
    }

    /// `kB` fields of /proc/PID/smaps_rollup (e.g. "Pss", "Pss_Anon", "Pss_File") in bytes, by field name.
    static func smapsRollupBytes(pid: Int32) -> [String: Int] {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/smaps_rollup", encoding: .utf8) else { return [:] }
        var fields: [String: Int] = [:]
        for line in text.split(separator: "\n") {
            let parts = line.split(separator: " ", omittingEmptySubsequences: true)
            guard parts.count == 3, parts[2] == "kB", parts[0].hasSuffix(":"), let kilobytes = Int(parts[1]) else {
                continue
            }
            fields[String(parts[0].dropLast())] = kilobytes * 1024
        }
        return fields
    }

    /// CLOCK_MONOTONIC in nanoseconds: the clock of the simulator's seq-timestamp pattern.
    static func monotonicNanoseconds() -> UInt64 {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return UInt64(now.tv_sec) * 1_000_000_000 + UInt64(now.tv_nsec)
    }
}
