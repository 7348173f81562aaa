import Foundation

/// Prints `compare`'s figures: one line per program, side, path and rate over all rounds, with the ratio to the C
/// program's CPU per notification measured in the same round on the same side, path and rate.
struct CompareReport {
    let rows: [CompareRow]
    let rounds: Int
    let duration: Double
    let minimumNotifications: Int
    let gattwayBinary: String
    let compileCommands: [CompareSide: String]

    func print() {
        let sides = Set(rows.map(\.side))
        Swift.print("")
        Swift.print(
            "Side by side: each phase max(\(Int(duration)) s, \(minimumNotifications) values) of 12-byte seq+timestamp values, MQTT QoS 0, one run, one simulator world, \(rounds) round\(rounds == 1 ? "" : "s")"
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
            "program", "side", "path", "rate/s", "sent", "delivered", "lost", "late", "p50 ms", "p99 ms", "p99 max",
            "hop p50", "hop p99", "hop p99 by round", "hop steal % by round", "µs/notif", "wakes", "× C",
            "× C by round", "VmRSS MiB", "VmHWM MiB", "PSS MiB", "PSS anon", "PSS file",
        ]
        var table: [[String]] = []
        for line in CompareLine.lines(of: rows) {
            let phases = line.rows.map(\.phase)
            let sent = phases.reduce(0) { $0 + $1.sent }
            let received = phases.reduce(0) { $0 + $1.received }
            let ratios = line.rows.map(ratio)
            table.append([
                line.relay.title(line.side), line.side.rawValue, line.path.rawValue, "\(Int(line.rate))",
                "\(sent)", "\(received)", "\(max(0, sent - received))", "\(phases.reduce(0) { $0 + $1.outOfOrder })",
                fixed(BenchReport.median(phases.map(\.latencyP50))),
                fixed(BenchReport.median(phases.map(\.latencyP99))),
                fixed(phases.map(\.latencyP99).max() ?? .nan),
                fixed(BenchReport.median(line.rows.compactMap { $0.hop?.p50 })),
                fixed(BenchReport.median(line.rows.compactMap { $0.hop?.p99 })),
                line.rows.compactMap { $0.hop.map { fixed($0.p99) } }.joined(separator: " "),
                line.rows.compactMap { $0.hop.map { fixed($0.hostSteal * 100, 1) } }.joined(separator: " "),
                fixed(BenchReport.median(phases.map(\.relayMicrosPerValue)), 1),
                fixed(BenchReport.median(phases.map(\.relayWakesPerValue))),
                fixed(BenchReport.median(ratios.compactMap { $0 })),
                ratios.count < 2 ? "" : ratios.map { $0.map { fixed($0) } ?? "-" }.joined(separator: " "),
                mebibytes(line.rows.compactMap(\.memory.rss).max()),
                mebibytes(line.rows.compactMap(\.memory.hwm).max()),
                mebibytes(line.rows.compactMap(\.memory.pss).max()),
                mebibytes(line.rows.compactMap(\.memory.pssAnon).max()),
                mebibytes(line.rows.compactMap(\.memory.pssFile).max()),
            ])
        }
        BenchReport.printTable(header, table)
        Swift.print(
            "µs/notif = the relaying process's CPU time over the phase ÷ values delivered (central side: to the")
        Swift.print(
            "benchmark's subscriber; peripheral side: to the simulator's central), the median over rounds; × C by round"
        )
        Swift.print(
            "= that ÷ the C program's on the same side, path, rate and round, and × C their median; sent, delivered,")
        Swift.print(
            "lost (sent − delivered) and late (out of order) summed over rounds; p50 and p99 the medians over rounds,")
        Swift.print(
            "p99 max the worst round's; memory at the end of a phase, the most of any round (PSS anon/file from")
        Swift.print(
            "/proc/PID/smaps_rollup); wakes = the relaying process's voluntary context switches over the phase ÷")
        Swift.print("values delivered (its threads' sleeps ended by a wake-up, per value), the median over rounds.")
        if sides.contains(.central) {
            Swift.print(
                "central latency = subscriber receipt − the simulator's CLOCK_MONOTONIC stamp in the value (broker included)."
            )
            Swift.print(
                "central hop = the latency the relay adds, in an extra phase traced with perf: the end of its write of a value's PUBLISH"
            )
            Swift.print(
                "− the start of the simulator's sendto of that value (StartNotify: to dbus-daemon, whose routing is included);"
            )
            Swift.print("the median over rounds of each round's p50 and p99.")
        }
        if sides.contains(.peripheral) {
            Swift.print(
                "peripheral latency = the central's CLOCK_MONOTONIC at receipt − the publisher's stamp (broker included);"
            )
            Swift.print(
                "StartNotify = PropertiesChanged(Value) to the simulator's bluetoothd; AcquireNotify = a SEQPACKET socket."
            )
            Swift.print(
                "peripheral hop = the end of the peripheral's send of a notification (StartNotify: of dbus-daemon's send of the signal to the central)"
            )
            Swift.print("− the start of the broker's write of that PUBLISH to it, traced with perf in an extra phase.")
        }
        Swift.print(
            "hop steal % = the share of the machine's CPU time the hypervisor took during each round's traced phase (steal"
        )
        Swift.print("in /proc/stat): a tail measured while it was high measures the host as much as the program.")
    }

    /// The row's CPU per notification ÷ the C program's in the same round, side, path and rate.
    private func ratio(_ row: CompareRow) -> Double? {
        guard
            let floor = rows.first(where: {
                $0.relay == .c && $0.side == row.side && $0.phase.path == row.phase.path
                    && $0.phase.requestedRate == row.phase.requestedRate && $0.round == row.round
            })
        else { return nil }
        let value = row.phase.relayMicrosPerValue / floor.phase.relayMicrosPerValue
        return value.isFinite ? value : nil
    }

    private func fixed(_ value: Double, _ decimals: Int = 2) -> String {
        value.isFinite ? String(format: "%.\(decimals)f", value) : "-"
    }

    private func mebibytes(_ bytes: Int?) -> String {
        bytes.map { String(format: "%.1f", Double($0) / 1_048_576) } ?? "-"
    }
}

/// The rounds of one program on one side, path and rate, in the table's order: side, then program (C, Gattway,
/// bleak), then path and rate as they were first run.
struct CompareLine {
    let relay: CompareRelayKind
    let side: CompareSide
    let path: SubscriptionPath
    let rate: Double
    var rows: [CompareRow]

    static func lines(of rows: [CompareRow]) -> [CompareLine] {
        var lines: [CompareLine] = []
        for row in rows {
            if let index = lines.firstIndex(where: {
                $0.relay == row.relay && $0.side == row.side && $0.path == row.phase.path
                    && $0.rate == row.phase.requestedRate
            }) {
                lines[index].rows.append(row)
            } else {
                lines.append(
                    CompareLine(
                        relay: row.relay, side: row.side, path: row.phase.path, rate: row.phase.requestedRate,
                        rows: [row]))
            }
        }
        let relayOrder: [CompareRelayKind] = [.c, .gattway, .bleak]
        let sideOrder: [CompareSide] = [.central, .peripheral]
        // firstIndex keeps the first-run order of paths and rates within a program (the sort below is stable).
        return lines.enumerated().sorted { left, right in
            let l = (sideOrder.firstIndex(of: left.element.side)!, relayOrder.firstIndex(of: left.element.relay)!)
            let r = (sideOrder.firstIndex(of: right.element.side)!, relayOrder.firstIndex(of: right.element.relay)!)
            return l != r ? l < r : left.offset < right.offset
        }.map(\.element)
    }
}
