import Foundation

/// Prints `compare`'s figures: one row per relay, path and rate, with the ratio to the C relay's CPU per
/// notification measured in the same run on the same path and rate.
struct CompareReport {
    let rows: [CompareRow]
    let duration: Double
    let minimumNotifications: Int
    let gattwayBinary: String
    let compileCommand: String

    func print() {
        Swift.print("")
        Swift.print(
            "Relays side by side: one device (fh0) notifying 12-byte seq+timestamp values, each phase max(\(Int(duration)) s, \(minimumNotifications) values), MQTT QoS 0, one run, one simulator world"
        )
        Swift.print("gattway: \(gattwayBinary)")
        if !compileCommand.isEmpty { Swift.print("C relay: Benchmarks/relay/relay.c, built with: \(compileCommand)") }
        Swift.print(
            "bleak+paho: Benchmarks/relay/bleak_relay.py in Tests/BlueZSimulator/.venv (bleak and paho-mqtt from its requirements)"
        )
        let header = [
            "relay", "path", "rate/s", "sent", "delivered", "lost", "late", "p50 ms", "p99 ms",
            "µs/notif", "× C", "VmRSS MiB", "VmHWM MiB", "PSS MiB", "PSS anon", "PSS file",
        ]
        var table: [[String]] = []
        for row in rows {
            let phase = row.phase
            table.append([
                row.relay.title, phase.path.rawValue, "\(Int(phase.requestedRate))", "\(phase.sent)",
                "\(phase.received)",
                "\(max(0, phase.sent - phase.received))", "\(phase.outOfOrder)",
                fixed(phase.latencyP50), fixed(phase.latencyP99), fixed(phase.relayMicrosPerValue, 1),
                ratio(row), mebibytes(row.memory.rss), mebibytes(row.memory.hwm), mebibytes(row.memory.pss),
                mebibytes(row.memory.pssAnon), mebibytes(row.memory.pssFile),
            ])
        }
        BenchReport.printTable(header, table)
        Swift.print(
            "µs/notif = the relaying process's utime+stime over the phase ÷ values delivered to the subscriber;")
        Swift.print(
            "× C = that ÷ the C relay's on the same path and rate; lost = sent − delivered; late = out of order;")
        Swift.print(
            "latency = subscriber receipt − the simulator's CLOCK_MONOTONIC stamp in the value (whole path, broker")
        Swift.print("included); memory at the end of the phase (PSS anon/file from /proc/PID/smaps_rollup).")
        Swift.print("Not measured here: the local peripheral's path (MQTT in → notification out).")
    }

    private func ratio(_ row: CompareRow) -> String {
        guard
            let floor = rows.first(where: {
                $0.relay == .c && $0.phase.path == row.phase.path && $0.phase.requestedRate == row.phase.requestedRate
            })
        else { return "-" }
        let value = row.phase.relayMicrosPerValue / floor.phase.relayMicrosPerValue
        return value.isFinite ? String(format: "%.2f", value) : "-"
    }

    private func fixed(_ value: Double, _ decimals: Int = 2) -> String {
        value.isFinite ? String(format: "%.\(decimals)f", value) : "-"
    }

    private func mebibytes(_ bytes: Int?) -> String {
        bytes.map { String(format: "%.1f", Double($0) / 1_048_576) } ?? "-"
    }
}
