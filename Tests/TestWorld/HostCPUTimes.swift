import Foundation

/// The machine's CPU time by kind, from the `cpu` line of /proc/stat, in clock ticks summed over all CPUs.
///
/// On a virtual machine, `steal` is the time the hypervisor ran something else while this machine had work: a
/// benchmark phase during which it was high measured the host as much as the program, its latency tail above all.
/// Benchmarks print the share of each phase so that a noisy phase can be told from a slow program.
package struct HostCPUTimes: Equatable, Sendable {
    /// Ticks in every kind counted (user, nice, system, idle, iowait, irq, softirq, steal).
    package let total: UInt64
    package let steal: UInt64

    package init(total: UInt64, steal: UInt64) {
        self.total = total
        self.steal = steal
    }

    /// Reads the `cpu` line of a /proc/stat text: nil when it is missing or holds fewer than the eight fields
    /// (user to steal) every kernel since 2.6.11 writes. `guest` and `guest_nice` are left out: the kernel counts
    /// them in `user` and `nice` already.
    package static func parse(procStat text: some StringProtocol) -> HostCPUTimes? {
        guard let line = text.split(separator: "\n").first(where: { $0.hasPrefix("cpu ") }) else { return nil }
        let fields = line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().prefix(8)
        let ticks = fields.compactMap { UInt64($0) }
        guard fields.count == 8, ticks.count == 8 else { return nil }
        return HostCPUTimes(total: ticks.reduce(0, +), steal: ticks[7])
    }

    /// This machine's figures now; nil where /proc/stat cannot be read.
    package static func now() -> HostCPUTimes? {
        (try? String(contentsOfFile: "/proc/stat", encoding: .utf8)).flatMap { parse(procStat: $0) }
    }

    /// The share of all CPU time between `earlier` and `self` that the hypervisor took (0–1); nil when no tick
    /// passed or the counters went backwards.
    package func stealShare(since earlier: HostCPUTimes) -> Double? {
        guard total > earlier.total, steal >= earlier.steal else { return nil }
        return Double(steal - earlier.steal) / Double(total - earlier.total)
    }

    /// The steal share between two readings either of which may be missing, as a figure to print: NaN (which
    /// reports print as "-") when a reading is missing or no tick passed.
    package static func stealShare(from earlier: HostCPUTimes?, to later: HostCPUTimes?) -> Double {
        guard let earlier, let later else { return .nan }
        return later.stealShare(since: earlier) ?? .nan
    }
}
