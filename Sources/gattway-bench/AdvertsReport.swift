import BridgeCore
import Foundation

/// Prints `adverts`' figures: one row per workload, round and receiver, with the ratios to the C programs' CPU per
/// advertisement measured in the same round on the same workload, and whether the simulator kept up; over several
/// rounds, then one line per workload and receiver with the medians.
struct AdvertsReport {
    let rows: [AdvertsRow]
    let rounds: Int
    let gattwayBinary: String
    /// The build the receiver `gattway-baseline` ran, when it ran.
    let baselineBinary: String?
    let compileCommand: String
    /// Whether the receivers published through the broker's unix socket.
    let unixSocket: Bool
    /// Gattway's `bluetooth.advert_batch` and the batching C receivers' sleep.
    let batchMilliseconds: Int
    /// The host's CPU per wake-up, measured before the workloads; nil when not measured.
    let wakeFloor: WakeFloor?

    /// Below this share of the asked rate the simulator, not the receiver, set the pace.
    static let simulatorShortfall = 0.95

    func print() {
        Swift.print("")
        Swift.print(
            "Passive advertisements, one run, \(rounds) round\(rounds == 1 ? "" : "s"): every advertisement a new reading (\"1 new/s\": once a second); LE discovery with duplicates on"
        )
        Swift.print(
            "gattway: \(gattwayBinary); devices by match: rules, connect: never, advert_min_interval 0.001 s (crowd: 0.5 s, 1 new/s: 1 s, paced: its default), advert_batch \(batchMilliseconds) ms (at most advert_min_interval), MQTT QoS 0 over \(unixSocket ? "the broker's unix socket" : "TCP on the loopback interface")"
        )
        if let baselineBinary, rows.contains(where: { $0.receiver == .gattwayBaseline }) {
            Swift.print("Gattway base: \(baselineBinary), with the same configuration")
        }
        if !compileCommand.isEmpty {
            Swift.print(
                "C receiver: Benchmarks/adverts/receiver.c (C rcv+MQTT: the same, with HOST PORT, or the socket's path and 0; C rcv batch: with -b \(batchMilliseconds); C batch+MQTT: both; C raw batch and C raw+MQTT: with -r, reading the bus without libdbus), built with:"
            )
            Swift.print("  \(compileCommand)")
        }
        let header = [
            "receiver", "workload", "round", "s", "sent/s", "received", "µs/advert", "wakes", "× C", "× C+MQTT",
            "VmRSS MiB", "PSS MiB", "PSS anon", "PSS file", "sim core", "bus core", "steal %",
        ]
        var table: [[String]] = []
        for row in rows {
            table.append([
                row.receiver.title, row.workload.label, "\(row.round)", fixed(row.seconds, 1), fixed(row.sentRate, 0),
                "\(row.received)",
                fixed(row.microsPerAdvert, 1), fixed(row.wakesPerAdvert, 2), fixed(ratio(row, to: .c) ?? .nan, 2),
                fixed(ratio(row, to: .cPublishing) ?? .nan, 2),
                mebibytes(row.memory.rss), mebibytes(row.memory.pss),
                mebibytes(row.memory.pssAnon), mebibytes(row.memory.pssFile), percent(row.simulatorCores),
                percent(row.busCores), fixed(row.hostSteal * 100, 1),
            ])
        }
        BenchReport.printTable(header, table)
        if rounds > 1 { printMedians() }
        if let wakeFloor {
            Swift.print(
                "wake-up floor of this host (\(WakeFloor.source), before the workloads, \(wakeFloor.intervalMilliseconds) ms apart): \(fixed(wakeFloor.bySocket, 1)) µs of CPU to be woken by a socket, \(fixed(wakeFloor.byTimer, 1)) µs by a timer (epoll_wait's timeout)"
            )
        }
        Swift.print(
            "µs/advert = the receiver's CPU time over the window ÷ advertisements it took in: for the C receiver")
        Swift.print(
            "the PropertiesChanged/InterfacesAdded signals carrying ServiceData or ManufacturerData, for Gattway the")
        Swift.print(
            "decoded states a subscriber received on gattway/+/state; × C = that ÷ the C receiver's on the same")
        Swift.print(
            "workload in the same round; × C+MQTT = that ÷ the same C program's when it also publishes each")
        Swift.print(
            "advertisement's bytes twice (QoS 0, retained), as Gattway publishes state and advert here: the floor of")
        Swift.print("the MQTT work without decoding or JSON; sent/s = the simulator's advertising reports; sim/bus")
        Swift.print(
            "core = the simulator's and its dbus-daemon's share of one core; steal % = the share of the machine's CPU")
        Swift.print(
            "time the hypervisor took in the window (/proc/stat); memory at the end of the window (PSS from")
        Swift.print(
            "/proc/PID/smaps_rollup). Over rounds, the table after the rows has the medians: a ratio is the")
        Swift.print("rounds' median.")
        Swift.print(
            "advert_min_interval also paces <device>/advert, so Gattway publishes each advertisement's raw advert")
        Swift.print(
            "JSON as well as its decoded state: two publishes per advertisement. wakes = the receiver's voluntary")
        Swift.print(
            "context switches in the window (summed over its threads) ÷ the advertisements µs/advert divides by.")
        if rows.contains(where: \.workload.countsReports) {
            Swift.print(
                "\", 1 new/s\": the sensor has a new reading once a second and repeats its packet in between; there")
            Swift.print(
                "µs/advert divides by the reports the simulator sent (every one received and recognised), received")
            Swift.print(
                "is Gattway's states (one per new reading, advert_min_interval 1 s), and C rcv+MQTT does not run.")
        }
        if rows.contains(where: { if case .paced = $0.workload { true } else { false } }) {
            Swift.print(
                "\", paced\": a new reading in every advertisement, as in the burst, with advert_min_interval at")
            Swift.print(
                "Gattway's default (\(fixed(ConfigurationDefaults.advertMinIntervalSeconds, 0)) s): every advertisement is decoded and its state written,"
            )
            Swift.print(
                "the newest published once per interval; µs/advert divides by the reports sent, as with \"1 new/s\".")
        }
        if rows.contains(where: { if case .repeating(_, true) = $0.workload { true } else { false } }) {
            let walk = AdvertsWorkload.rssiWalk
            Swift.print(
                "\", RSSI moving\": the same, with the RSSI of each report a random walk (up to \(walk.step) dB a report,"
            )
            Swift.print(
                "\(walk.min) to \(walk.max) dBm), as a real link's: most repeats change the RSSI, and so the advert JSON."
            )
        }
        // On repeats (and when paced) CPU is divided by the reports sent, so a Gattway that stopped publishing would
        // still look cheap: its states must keep up with what the workload has it publish.
        for row in rows
        where !row.receiver.isC && row.workload.countsReports
            && Double(row.received) < row.workload.minimumStates(over: row.seconds)
        {
            Swift.print(
                "note: during \(row.workload.label), Gattway published \(row.received) states in \(fixed(row.seconds, 1)) s: fewer than it should have, so its figure does not count"
            )
        }
        for row in rows where row.sentRate < row.workload.nominalRate * Self.simulatorShortfall {
            Swift.print(
                "note: during \(row.receiver.title), \(row.workload.label), the simulator sent \(fixed(row.sentRate, 0))/s of \(Int(row.workload.nominalRate))/s asked (\(percent(row.simulatorCores)) of a core): it was the limit"
            )
        }
    }

    /// Per workload and receiver over the rounds: the median CPU per advertisement, and the median of the
    /// round-by-round ratios with each round's.
    private func printMedians() {
        Swift.print("")
        Swift.print("Medians over the \(rounds) rounds:")
        var lines: [(receiver: AdvertsReceiverKind, workload: AdvertsWorkload)] = []
        for row in rows where !lines.contains(where: { $0.receiver == row.receiver && $0.workload == row.workload }) {
            lines.append((row.receiver, row.workload))
        }
        var table: [[String]] = []
        for line in lines {
            let measured = rows.filter { $0.receiver == line.receiver && $0.workload == line.workload }
            let toC = measured.map { ratio($0, to: .c) ?? .nan }
            let toPublishing = measured.map { ratio($0, to: .cPublishing) ?? .nan }
            table.append([
                line.receiver.title, line.workload.label,
                fixed(BenchReport.median(measured.map(\.microsPerAdvert)), 1),
                fixed(BenchReport.median(toC), 2), byRound(toC), fixed(BenchReport.median(toPublishing), 2),
                byRound(toPublishing),
            ])
        }
        BenchReport.printTable(
            ["receiver", "workload", "µs/advert", "× C", "× C by round", "× C+MQTT", "× C+MQTT by round"], table)
    }

    /// The row's CPU per advertisement ÷ the floor's in the same round on the same workload.
    private func ratio(_ row: AdvertsRow, to floorKind: AdvertsReceiverKind) -> Double? {
        guard
            let floor = rows.first(where: {
                $0.receiver == floorKind && $0.workload == row.workload && $0.round == row.round
            })
        else { return nil }
        let value = row.microsPerAdvert / floor.microsPerAdvert
        return value.isFinite ? value : nil
    }

    private func byRound(_ values: [Double]) -> String {
        values.allSatisfy({ !$0.isFinite }) ? "-" : values.map { fixed($0, 2) }.joined(separator: " ")
    }

    private func fixed(_ value: Double, _ decimals: Int) -> String {
        value.isFinite ? String(format: "%.\(decimals)f", value) : "-"
    }

    private func percent(_ value: Double) -> String { value.isFinite ? String(format: "%.0f%%", value * 100) : "-" }

    private func mebibytes(_ bytes: Int?) -> String {
        bytes.map { String(format: "%.1f", Double($0) / 1_048_576) } ?? "-"
    }
}
