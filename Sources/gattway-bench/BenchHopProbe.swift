import Foundation
import TestWorld

/// Records, with `perf record`, the system calls `SyscallHops` pairs into the latency a relay adds to each value:
/// the start of the call that hands a value to the relay and the end of the one with which the relay hands it on,
/// in CLOCK_MONOTONIC.
///
/// Tracing makes every system call of the two processes dearer, so a probed phase is an extra one whose CPU figures
/// are not reported.
final class BenchHopProbe {
    /// A TestWorld child: it starts with no signal blocked, so perf sees the SIGINT that ends its recording.
    private let perf: ChildProcess
    private let dataPath: String
    private let sender: Int32
    private let relay: Int32

    /// Fails with perf's own words when it cannot trace here (missing, or not allowed to: perf_event_paranoid).
    static func check(scratch: String) throws {
        let data = scratch + "/perf-check.data"
        let (status, errors) = try BenchProcess.runToEnd(
            "perf", ["record", "-q", "-e", "syscalls:sys_exit_write", "-o", data, "--", "true"])
        try? FileManager.default.removeItem(atPath: data)
        guard status == 0 else {
            throw BenchError(
                "perf cannot record system calls here (hop latency needs it; --hop-seconds 0 leaves it out): \(errors)")
        }
    }

    /// Starts recording `sender` and `relay`; returns once perf has had time to attach.
    init(sender: Int32, relay: Int32, scratch: String, label: String) async throws {
        self.sender = sender
        self.relay = relay
        dataPath = scratch + "/hops-\(label).data"
        let tracepoints = SyscallHops.calls.flatMap {
            ["-e", "syscalls:sys_enter_\($0)", "-e", "syscalls:sys_exit_\($0)"]
        }
        // 8 MiB of ring buffer per CPU: an event perf loses would unpair the streams.
        perf = try ChildProcess(
            "perf",
            ["record", "-q", "-m", "2048", "-k", "CLOCK_MONOTONIC"] + tracepoints
                + ["-p", "\(sender),\(relay)", "-o", dataPath])
        // perf prints nothing once it records; attaching to two processes takes well under this.
        try await Task.sleep(for: .seconds(1))
        guard perf.isRunning else { throw BenchError("perf record exited at once: \(perf.errorOutput.suffix(800))") }
    }

    deinit {
        perf.send(SIGKILL)
        try? FileManager.default.removeItem(atPath: dataPath)
    }

    /// Stops recording and returns the figures of `phase`, the phase it traced, printed; nil, with the reason
    /// printed, when the phase lost values or the two streams did not pair.
    func figures(of phase: NotificationPhaseResult, label: String) async -> HopFigures? {
        do {
            guard phase.received == phase.sent else {
                throw BenchError("\(phase.sent - phase.received) of \(phase.sent) values were lost")
            }
            let hops = HopFigures(seconds: try await finish(), hostSteal: phase.hostSteal)
            progress(
                "… \(label) traced: \(hops.values) values, added latency p50 \(BenchReport.ms(hops.p50)), p99 \(BenchReport.ms(hops.p99)), max \(BenchReport.ms(hops.max)), host steal \(BenchReport.share(hops.hostSteal))"
            )
            return hops
        } catch {
            progress("… \(label): added latency not measured: \(error)")
            return nil
        }
    }

    /// Stops recording and returns each value's seconds in the relay, oldest first.
    private func finish() async throws -> [Double] {
        perf.send(SIGINT)
        guard let status = await perf.waitForExit(timeout: .seconds(30)) else {
            perf.send(SIGKILL)
            throw BenchError("perf record did not stop within 30 s of SIGINT")
        }
        // perf ends by raising the SIGINT it caught again, once the recording is written.
        guard status == 0 || status == SIGINT else {
            throw BenchError("perf record failed (\(status)): \(perf.errorOutput.suffix(800))")
        }
        let script = dataPath + ".txt"
        defer { try? FileManager.default.removeItem(atPath: script) }
        guard FileManager.default.createFile(atPath: script, contents: nil),
            let output = FileHandle(forWritingAtPath: script)
        else { throw BenchError("cannot create \(script)") }
        let (scriptStatus, errors) = try BenchProcess.runToEnd(
            "perf", ["script", "-i", dataPath, "-F", "pid,tid,time,event,trace"], output: output)
        try output.close()
        guard scriptStatus == 0 else { throw BenchError("perf script failed: \(errors)") }
        let text = try String(contentsOfFile: script, encoding: .utf8)
        let events = text.split(separator: "\n").compactMap { SyscallHops.parse($0) }
        return try SyscallHops.latencies(of: events, sender: sender, relay: relay)
    }
}

/// The added latency of one relay's values in one probed phase, in milliseconds.
struct HopFigures: Sendable {
    let values: Int
    let p50: Double
    let p99: Double
    let max: Double
    /// The share of the machine's CPU time the hypervisor took during the traced phase (NaN: unknown): the tail of
    /// a phase it disturbed measures the host as much as the relay.
    let hostSteal: Double

    init(seconds: [Double], hostSteal: Double) {
        self.hostSteal = hostSteal
        values = seconds.count
        let quantiles = BenchPercentiles.milliseconds(seconds.map { UInt64(($0 * 1e9).rounded()) }, [0.5, 0.99, 1.0])
        p50 = quantiles[0]
        p99 = quantiles[1]
        max = quantiles[2]
    }
}
