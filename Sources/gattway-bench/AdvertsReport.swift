import Foundation

/// Prints `adverts`' figures: one row per workload and receiver, with the ratios to the C programs' CPU per
/// advertisement measured in the same run on the same workload, and whether the simulator kept up.
struct AdvertsReport {
    let rows: [AdvertsRow]
    let gattwayBinary: String
    let compileCommand: String

    /// Below this share of the asked rate the simulator, not the receiver, set the pace.
    static let simulatorShortfall = 0.95
    /// On a workload of repeats, the share of the sensor's new readings (one a second) Gattway must publish.
    static let newReadingsShare = 0.8

    func print() {
        Swift.print("")
        Swift.print(
            "Passive advertisements, one run: every advertisement a new reading (\"1 new/s\": once a second); LE discovery with duplicates on"
        )
        Swift.print(
            "gattway: \(gattwayBinary); devices by match: rules, connect: never, advert_min_interval 0.001 s (1 new/s: 1 s), MQTT QoS 0"
        )
        if !compileCommand.isEmpty {
            Swift.print("C receiver: Benchmarks/adverts/receiver.c (C rcv+MQTT: the same, with HOST PORT), built with:")
            Swift.print("  \(compileCommand)")
        }
        let header = [
            "receiver", "workload", "s", "sent/s", "received", "µs/advert", "wakes", "× C", "× C+MQTT", "VmRSS MiB",
            "PSS MiB",
            "PSS anon", "PSS file", "sim core", "bus core",
        ]
        var table: [[String]] = []
        for row in rows {
            table.append([
                row.receiver.title, row.workload.label, fixed(row.seconds, 1), fixed(row.sentRate, 0),
                "\(row.received)",
                fixed(row.microsPerAdvert, 1), fixed(row.wakesPerAdvert, 2), ratio(row, to: .c),
                ratio(row, to: .cPublishing),
                mebibytes(row.memory.rss), mebibytes(row.memory.pss),
                mebibytes(row.memory.pssAnon), mebibytes(row.memory.pssFile), percent(row.simulatorCores),
                percent(row.busCores),
            ])
        }
        BenchReport.printTable(header, table)
        Swift.print(
            "µs/advert = the receiver's utime+stime over the window ÷ advertisements it took in: for the C receiver")
        Swift.print(
            "the PropertiesChanged/InterfacesAdded signals carrying ServiceData or ManufacturerData, for Gattway the")
        Swift.print(
            "decoded states a subscriber received on gattway/+/state; × C = that ÷ the C receiver's on the same")
        Swift.print(
            "workload; × C+MQTT = that ÷ the same C program's when it also publishes each advertisement's bytes twice")
        Swift.print(
            "(QoS 0, retained), as Gattway publishes state and advert here: the floor of the MQTT work without decoding"
        )
        Swift.print("or JSON; sent/s = the simulator's advertising reports; sim/bus core = the simulator's and its")
        Swift.print(
            "dbus-daemon's share of one core; memory at the end of the window (PSS from /proc/PID/smaps_rollup).")
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
        // On repeats CPU is divided by the reports sent, so a Gattway that stopped publishing would still look
        // cheap: its states must keep up with the sensor's new readings (one a second).
        for row in rows
        where row.receiver == .gattway && row.workload.countsReports
            && Double(row.received) < row.seconds * Self.newReadingsShare
        {
            Swift.print(
                "note: during \(row.workload.label), Gattway published \(row.received) states in \(fixed(row.seconds, 1)) s: fewer than the sensor's new readings, so its figure does not count"
            )
        }
        for row in rows where row.sentRate < row.workload.nominalRate * Self.simulatorShortfall {
            Swift.print(
                "note: during \(row.receiver.title), \(row.workload.label), the simulator sent \(fixed(row.sentRate, 0))/s of \(Int(row.workload.nominalRate))/s asked (\(percent(row.simulatorCores)) of a core): it was the limit"
            )
        }
    }

    private func ratio(_ row: AdvertsRow, to floorKind: AdvertsReceiverKind) -> String {
        guard let floor = rows.first(where: { $0.receiver == floorKind && $0.workload == row.workload }) else {
            return "-"
        }
        let value = row.microsPerAdvert / floor.microsPerAdvert
        return value.isFinite ? String(format: "%.2f", value) : "-"
    }

    private func fixed(_ value: Double, _ decimals: Int) -> String {
        value.isFinite ? String(format: "%.\(decimals)f", value) : "-"
    }

    private func percent(_ value: Double) -> String { value.isFinite ? String(format: "%.0f%%", value * 100) : "-" }

    private func mebibytes(_ bytes: Int?) -> String {
        bytes.map { String(format: "%.1f", Double($0) / 1_048_576) } ?? "-"
    }
}
