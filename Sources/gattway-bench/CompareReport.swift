import Foundation

/// Prints `compare`'s figures: one row per program, side, path and rate, with the ratio to the C program's CPU per
/// notification measured in the same run on the same side, path and rate.
struct CompareReport {
    let rows: [CompareRow]
    let duration: Double
    let minimumNotifications: Int
    let gattwayBinary: String
    let compileCommands: [CompareSide: String]

    func print() {
        let sides = Set(rows.map(\.side))
        Swift.print("")
        Swift.print(
            "Side by side: each phase max(\(Int(duration)) s, \(minimumNotifications) values) of 12-byte seq+timestamp values, MQTT QoS 0, one run, one simulator world"
        )
        if sides.contains(.central) {
            Swift.print("central: device fh0 notifies; each relay publishes its values to \(CompareStage.topic)")
        }
        if sides.contains(.peripheral) {
            Swift.print(
                "peripheral: the benchmark publishes to \(CompareStage.peripheralTopic); the peripheral notifies the simulator's central (MTU 247, no link limit)"
            )
        }
        Swift.print("gattway: \(gattwayBinary)")
        if let command = compileCommands[.central] {
            Swift.print("C relay: Benchmarks/relay/relay.c, built with: \(command)")
        }
        if let command = compileCommands[.peripheral] {
            Swift.print("C peripheral: Benchmarks/peripheral/peripheral.c, built with: \(command)")
        }
        if rows.contains(where: { $0.relay == .bleak }) {
            Swift.print(
                "bleak+paho: Benchmarks/relay/bleak_relay.py in Tests/BlueZSimulator/.venv (bleak and paho-mqtt from its requirements)"
            )
        }
        let header = [
            "program", "side", "path", "rate/s", "sent", "delivered", "lost", "late", "p50 ms", "p99 ms",
            "µs/notif", "× C", "VmRSS MiB", "VmHWM MiB", "PSS MiB", "PSS anon", "PSS file",
        ]
        var table: [[String]] = []
        for row in rows {
            let phase = row.phase
            table.append([
                row.relay.title(row.side), row.side.rawValue, phase.path.rawValue, "\(Int(phase.requestedRate))",
                "\(phase.sent)", "\(phase.received)",
                "\(max(0, phase.sent - phase.received))", "\(phase.outOfOrder)",
                fixed(phase.latencyP50), fixed(phase.latencyP99), fixed(phase.relayMicrosPerValue, 1),
                ratio(row), mebibytes(row.memory.rss), mebibytes(row.memory.hwm), mebibytes(row.memory.pss),
                mebibytes(row.memory.pssAnon), mebibytes(row.memory.pssFile),
            ])
        }
        BenchReport.printTable(header, table)
        Swift.print(
            "µs/notif = the relaying process's utime+stime over the phase ÷ values delivered (central side: to the")
        Swift.print(
            "benchmark's subscriber; peripheral side: to the simulator's central); × C = that ÷ the C program's on the")
        Swift.print(
            "same side, path and rate; lost = sent − delivered; late = out of order; memory at the end of the phase")
        Swift.print("(PSS anon/file from /proc/PID/smaps_rollup).")
        if sides.contains(.central) {
            Swift.print(
                "central latency = subscriber receipt − the simulator's CLOCK_MONOTONIC stamp in the value (broker included)."
            )
        }
        if sides.contains(.peripheral) {
            Swift.print(
                "peripheral latency = the central's CLOCK_MONOTONIC at receipt − the publisher's stamp (broker included);"
            )
            Swift.print(
                "StartNotify = PropertiesChanged(Value) to the simulator's bluetoothd; AcquireNotify = a SEQPACKET socket."
            )
        }
    }

    private func ratio(_ row: CompareRow) -> String {
        guard
            let floor = rows.first(where: {
                $0.relay == .c && $0.side == row.side && $0.phase.path == row.phase.path
                    && $0.phase.requestedRate == row.phase.requestedRate
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
