import ArgumentParser
import Foundation
import TestWorld

/// Gattway side by side with the floor and with what users write instead, in one run against one simulator world:
/// a minimal C relay (libdbus + libmosquitto, one thread, one poll loop; compiled now from
/// Benchmarks/relay/relay.c), the `gattway` binary, and a bleak + paho-mqtt script (Benchmarks/relay/bleak_relay.py,
/// run by the simulator's venv). Each relays device fh0's seq+timestamp notifications to MQTT at QoS 0, on the
/// StartNotify path (PropertiesChanged over D-Bus) and on the AcquireNotify path (a socket), at paced rates.
/// The peripheral side runs the local peripheral's path the other way (MQTT in → notification out): a minimal C
/// peripheral (Benchmarks/peripheral/peripheral.c) and Gattway's peripheral, to the simulator's remote central
/// subscribed through an AcquireNotify socket or StartNotify (PropertiesChanged of the Value).
struct CompareBenchmark: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "compare",
        abstract:
            "CPU per notification, memory, loss and latency of C programs, Gattway and a bleak script, side by side.")

    @Option(help: "Seconds per notification phase at least.") var duration: Double = 5
    @Option(
        help:
            "Notifications per phase at least (a phase at a low rate runs longer, so that a figure averages over thousands of values and scheduler noise)."
    )
    var minimumNotifications: Int = 5000
    @Option(help: "Notification rates (per second, comma-separated) of device fh0.") var rates: String = "200,1000,5000"
    @Option(help: "Relays to run (comma-separated: c,gattway,bleak); the ratio column needs c.")
    var relays: String = "c,gattway,bleak"
    @Option(help: "Subscription paths (comma-separated: StartNotify,AcquireNotify), on each side.")
    var paths: String = "StartNotify,AcquireNotify"
    @Option(
        help:
            "Sides (comma-separated: central,peripheral): the central bridge's relays (notification in → MQTT out) and the local peripheral (MQTT in → notification out; c and gattway only)."
    )
    var sides: String = "central,peripheral"
    @Option(
        help:
            "The gattway binary (default: .build/release/gattway of this package if built, else the one next to this program)."
    )
    var gattway: String?
    @Option(help: "The BlueZ simulator launcher (default: Tests/BlueZSimulator/bluez-sim of this package).")
    var simulator: String?
    @Option(
        help:
            "Rounds: each runs the C program and Gattway once more on every side and path, the two back to back and in turns going first, so that both meet the machine alike; a figure is the median over rounds, a ratio the median of each round's own ratio. bleak runs in the first round only."
    )
    var rounds: Int = 3
    @Option(
        help:
            "Seconds of an extra phase after each one, traced with perf (central: from the start of the simulator's sendto of a value to the end of the relay's write of its PUBLISH; peripheral: from the start of the broker's write of a PUBLISH to the end of the peripheral's send of the notification, on StartNotify of dbus-daemon's send of it to the central): the latency each program adds, without the broker, subscriber or central; 0 leaves it out."
    )
    var hopSeconds: Double = 4

    func validate() throws {
        guard duration >= 1 else { throw ValidationError("--duration must be at least 1 second") }
        guard minimumNotifications >= 0 else { throw ValidationError("--minimum-notifications must not be negative") }
        _ = try pacedRates()
        _ = try selectedRelays()
        _ = try selectedPaths()
        _ = try selectedSides()
        guard (1...20).contains(rounds) else { throw ValidationError("--rounds must be 1…20, got \(rounds)") }
        guard hopSeconds == 0 || hopSeconds >= 1 else {
            throw ValidationError("--hop-seconds must be 0 or at least 1, got \(hopSeconds)")
        }
    }

    private func pacedRates() throws -> [Double] {
        let values = rates.split(separator: ",").map { Double($0.trimmingCharacters(in: .whitespaces)) }
        guard !values.isEmpty, !values.contains(nil), values.allSatisfy({ $0! > 0 }) else {
            throw ValidationError("--rates must be positive numbers separated by commas, got \(rates)")
        }
        return values.map { $0! }
    }

    private func selectedRelays() throws -> [CompareRelayKind] {
        try BenchLocations.list(relays, of: "relay", choices: "c, gattway and/or bleak") {
            CompareRelayKind(rawValue: $0)
        }
    }

    /// The relays of one round: the C program and Gattway go first in turns (a machine that slows down or speeds up
    /// over a round then weighs on both alike across rounds); bleak, only context, runs in the first round.
    private func relaysInTurn(round: Int) throws -> [CompareRelayKind] {
        let selected = try selectedRelays()
        let turned = round.isMultiple(of: 2) ? selected.reversed() : selected
        return turned.filter { $0 != .bleak || round == 1 }
    }

    private func selectedPaths() throws -> [SubscriptionPath] {
        try BenchLocations.list(paths, of: "path", choices: "StartNotify and/or AcquireNotify") {
            SubscriptionPath(rawValue: $0)
        }
    }

    private func selectedSides() throws -> [CompareSide] {
        try BenchLocations.list(sides, of: "side", choices: "central and/or peripheral") { CompareSide(rawValue: $0) }
    }

    func run() async throws {
        // The release binary when it is built, whichever build this program is; else the one next to it.
        let (located, packageRoot, build) = try BenchLocations.underTest(gattway: gattway, simulator: simulator)
        let gattwayPath = located.gattway
        progress("… gattway under test: \(gattwayPath) (\(build) build)")
        let paths = BenchPaths(gattway: gattwayPath, simulator: located.simulator, scenario: located.scenario)

        progress("… starting mosquitto and the simulator")
        let stage = try await CompareStage(paths: paths)
        var rows: [CompareRow] = []
        var compileCommands: [CompareSide: String] = [:]
        do {
            let sides = try selectedSides()
            if hopSeconds > 0 { try BenchHopProbe.check(scratch: stage.directory) }
            if sides.contains(.central) {
                let runner = CompareRelayRunner(
                    stage: stage, paths: paths, packageRoot: packageRoot, duration: duration,
                    minimumNotifications: minimumNotifications, hopSeconds: hopSeconds)
                if try selectedRelays().contains(.c) { compileCommands[.central] = try runner.compileCRelay() }
                for round in 1...rounds {
                    for path in try selectedPaths() {
                        for kind in try relaysInTurn(round: round) {
                            rows += try await runner.measure(kind, path, rates: try pacedRates()).map {
                                $0.inRound(round)
                            }
                        }
                    }
                }
            }
            if sides.contains(.peripheral) {
                let runner = ComparePeripheralRunner(
                    stage: stage, paths: paths, packageRoot: packageRoot, duration: duration,
                    minimumNotifications: minimumNotifications, hopSeconds: hopSeconds)
                if try selectedRelays().contains(.c) { compileCommands[.peripheral] = try runner.compileCPeripheral() }
                var index = 0
                for round in 1...rounds {
                    for path in try selectedPaths() {
                        // bleak has no peripheral role here (a bless script would be its counterpart).
                        for kind in try relaysInTurn(round: round) where kind != .bleak {
                            index += 1
                            rows += try await runner.measure(kind, path, rates: try pacedRates(), run: index).map {
                                $0.inRound(round)
                            }
                        }
                    }
                }
            }
        } catch {
            progress("simulator log:\n\(stage.simulator.process.errorOutput.suffix(1500))")
            await stage.stop()
            throw error
        }
        await stage.stop()
        CompareReport(
            rows: rows, rounds: rounds, duration: duration, minimumNotifications: minimumNotifications,
            gattwayBinary: "\(gattwayPath) (\(build) build)",
            compileCommands: compileCommands
        ).print()
    }
}

/// The relays `compare` runs.
enum CompareRelayKind: String, Sendable {
    case c
    case gattway
    case bleak

    func title(_ side: CompareSide) -> String {
        switch (self, side) {
        case (.c, .central): "C relay"
        case (.c, .peripheral): "C peripheral"
        case (.gattway, _): "Gattway"
        case (.bleak, _): "bleak+paho"
        }
    }
}

/// The direction measured: the central bridge relays a device's notifications to MQTT; the local peripheral
/// notifies a central of MQTT messages.
enum CompareSide: String, Sendable {
    case central
    case peripheral
}

/// One paced phase of one relay on one path, with the relay's memory at the phase's end.
struct CompareRow: Sendable {
    let relay: CompareRelayKind
    let side: CompareSide
    let phase: NotificationPhaseResult
    let memory: CompareMemory
    var round = 1
    /// The latency the relay added in the extra traced phase (central side), when measured.
    var hop: HopFigures?

    func inRound(_ round: Int) -> CompareRow {
        var row = self
        row.round = round
        return row
    }
}

/// Resident memory of a process: VmRSS and VmHWM from /proc/PID/status, PSS and its anonymous and file-backed
/// parts from /proc/PID/smaps_rollup (shared pages divided among the processes that map them).
struct CompareMemory: Sendable {
    let rss: Int?
    let hwm: Int?
    let pss: Int?
    let pssAnon: Int?
    let pssFile: Int?

    init(pid: Int32) {
        rss = BenchProcStats.statusBytes(pid: pid, field: "VmRSS")
        hwm = BenchProcStats.statusBytes(pid: pid, field: "VmHWM")
        let rollup = BenchProcStats.smapsRollupBytes(pid: pid)
        pss = rollup["Pss"]
        pssAnon = rollup["Pss_Anon"]
        pssFile = rollup["Pss_File"]
    }
}
