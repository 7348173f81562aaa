import Foundation

/// Prints the central benchmark's figures as one table, then memory and writes. Floors are not quoted here: a
/// figure is compared only with one measured in the same run (`gattway-bench compare`).
struct BenchReport {
    let devices: Int
    let duration: Double
    let qos: Int
    let brokerNoDelay: Bool
    let runs: [PathRunResult]

    /// The median of the finite values (NaN when there is none).
    static func median(_ values: [Double]) -> Double {
        let sorted = values.filter(\.isFinite).sorted()
        guard !sorted.isEmpty else { return .nan }
        let middle = sorted.count / 2
        return sorted.count.isMultiple(of: 2) ? (sorted[middle - 1] + sorted[middle]) / 2 : sorted[middle]
    }

    static func ms(_ value: Double) -> String { value.isNaN ? "-" : String(format: "%.2f ms", value) }
    /// A share (0–1) as a percentage with one decimal, "-" when unknown.
    static func share(_ value: Double) -> String { value.isFinite ? String(format: "%.1f %%", value * 100) : "-" }

    func print() {
        Swift.print("")
        Swift.print(
            "Central bridge: \(devices) devices, \(Int(duration)) s per phase, MQTT QoS \(qos), broker set_tcp_nodelay \(brokerNoDelay), codec raw (12-byte u32 seq + u64 CLOCK_MONOTONIC ns)"
        )
        let header = [
            "path", "phase", "asked/s", "emitted/s", "delivered/s", "sent", "received", "lost", "late",
            "sim drop", "p50 ms", "p99 ms", "p99 >0.5s", "end ms", "max ms", "ok", "gw µs/notif", "gw core", "broker",
            "sim",
        ]
        var rows: [[String]] = []
        for run in runs {
            for phase in run.saturationAttempts + run.paced {
                rows.append([
                    run.path.rawValue, phase.label, format(phase.requestedRate), format(phase.emittedRate),
                    format(phase.deliveredRate), "\(phase.sent)", "\(phase.received)",
                    "\(max(0, phase.sent - phase.received))", "\(phase.outOfOrder)", "\(phase.simulatorDropped)",
                    fixed(phase.latencyP50), fixed(phase.latencyP99), fixed(phase.latencyP99AfterWarmUp),
                    fixed(phase.latencyAtEnd), fixed(phase.latencyMax),
                    phase.sustained ? "yes" : (phase.lossless ? "backlog" : "loss"),
                    fixed(phase.relayMicrosPerValue, 1), percent(phase.relayCores), percent(phase.brokerCores),
                    percent(phase.simulatorCores),
                ])
            }
        }
        Self.printTable(header, rows)
        Swift.print("lost = sent − received; late = values older than one already received; sim drop = the simulator's")
        Swift.print(
            "socket was full (bluetoothd drops then too); p99 >0.5s = p99 without the first 0.5 s; end ms = median")
        Swift.print("latency of the last 5 % (a growing backlog); ok = lossless, in order and end ms < 50 (sustained);")
        Swift.print(
            "gw µs/notif = gattway CPU time ÷ values; gw core/broker/sim = share of one core over the phase.")
        Swift.print("")
        for run in runs {
            let memory = run.peakResidentBytes.map { String(format: "%.1f MiB", Double($0) / 1_048_576) } ?? "-"
            Swift.print(
                "\(run.path.rawValue): peak resident memory (VmHWM) \(memory); path check: \(run.fallbackConfirmed)")
            if let write = run.write {
                Swift.print(
                    "/set → /set/result round trip, \(write.count) sequential writes with response: p50 \(Self.ms(write.p50)), p99 \(Self.ms(write.p99)), max \(Self.ms(write.max)), failures \(write.failures)"
                )
            }
        }
        Swift.print("")
        Swift.print("For the C floor measured in the same run, side by side: gattway-bench compare.")
    }

    private func format(_ value: Double) -> String {
        guard value.isFinite else { return "-" }
        let whole = Int(value.rounded())
        var digits = String(whole)
        var result = ""
        while digits.count > 3 {
            result = "," + digits.suffix(3) + result
            digits = String(digits.dropLast(3))
        }
        return digits + result
    }

    private func fixed(_ value: Double, _ decimals: Int = 2) -> String {
        value.isFinite ? String(format: "%.\(decimals)f", value) : "-"
    }

    private func percent(_ value: Double) -> String { value.isFinite ? String(format: "%.0f%%", value * 100) : "-" }

    static func printTable(_ header: [String], _ rows: [[String]]) {
        let all = [header] + rows
        let widths = header.indices.map { column in all.map { $0[column].count }.max() ?? 0 }
        func line(_ cells: [String]) -> String {
            cells.enumerated().map { column, cell in
                let pad = String(repeating: " ", count: widths[column] - cell.count)
                // Text columns left-aligned, figures right-aligned.
                return column < 2 ? cell + pad : pad + cell
            }.joined(separator: " | ")
        }
        Swift.print(line(header))
        Swift.print(widths.map { String(repeating: "-", count: $0) }.joined(separator: "-|-"))
        for row in rows { Swift.print(line(row)) }
    }
}
