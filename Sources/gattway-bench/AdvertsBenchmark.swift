import ArgumentParser
import BridgeCore
import Foundation
import TestWorld

/// Passive advertisements, Gattway against the floor in one run: for each workload the simulator advertises sensors
/// whose every advertisement carries a new reading; a minimal C program (Benchmarks/adverts/receiver.c, compiled
/// now) that only receives the advertisement signals, the same program publishing two messages per advertisement
/// as Gattway does here (no decoding, no JSON), then Gattway (devices by `match:`, `connect: never`,
/// duplicates on), each measured over a window: CPU per advertisement from the process's CPU-time clock, and memory.
struct AdvertsBenchmark: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "adverts",
        abstract: "CPU per advertisement decoded and published, and memory, of Gattway and a C receiver, side by side.")

    @Option(help: "Seconds per measured window at least.") var duration: Double = 10
    @Option(
        help:
            "Advertisements per window at least (a workload at a low rate measures longer, so that a figure averages over thousands of advertisements and scheduler noise)."
    )
    var minimumAdverts: Int = 3000
    @Option(help: "Seconds a receiver runs before its window (discovery, the first decodes).") var warmUp: Double = 3
    @Option(
        help:
            "Rounds per workload: each round measures every receiver once, in turns (the order reversed every other round); a ratio is the median of each round's own."
    )
    var rounds: Int = 1
    @Option(
        help:
            "Workloads (comma-separated): crowd (1,000 sensors at 1/s each; crowd50: 50 sensors at 20/s, any count from 40 that divides 1,000), rates of one sensor with a new reading in every advertisement (100), rates of one sensor with a new reading once a second and repeats between (100r; 100w: with the RSSI moving, as a real link's does), and rates of the first sensor with Gattway publishing at its default advert_min_interval (100p: every advertisement decoded, the newest state published once per interval)."
    )
    var workloads: String = "crowd,100,500,100r,500r,100w,100p,500p"
    @Option(
        help:
            "Receivers to run (comma-separated: c, c-publish, c-batch, c-batch-publish, c-raw-batch, c-raw-batch-publish, gattway, gattway-baseline); the ratio columns need c and c-publish."
    )
    var receivers: String = "c,c-publish,c-batch,gattway"
    @Option(
        help:
            "The gattway binary (default: .build/release/gattway of this package if built, else the one next to this program)."
    )
    var gattway: String?
    @Option(
        help:
            "Another gattway binary, run by the receiver gattway-baseline in the same rounds as the one under test (a build of another commit, copied aside)."
    )
    var baseline: String?
    @Option(help: "The BlueZ simulator launcher (default: Tests/BlueZSimulator/bluez-sim of this package).")
    var simulator: String?
    @Option(
        help:
            "Milliseconds Gattway may gather reports for (its bluetooth.advert_batch, at most advert_min_interval) and the batching C receivers sleep once the socket is drained (default: Gattway's default)."
    )
    var advertBatch: Int = Int(ConfigurationDefaults.advertBatchMilliseconds)
    @Flag(
        help:
            "Every receiver publishes through the broker's unix socket (Gattway: mqtt.url unix://…) instead of TCP on the loopback interface."
    )
    var unixSocket = false
    @Flag(
        inversion: .prefixedNo,
        help:
            "Measure the host's floor per wake-up first (Benchmarks/adverts/wakes.c: the CPU of one wake-up by a socket and by a timer, 10 ms apart) and print it with the figures."
    )
    var wakeFloor = true

    func validate() throws {
        guard duration >= 1 else { throw ValidationError("--duration must be at least 1 second") }
        guard warmUp >= 0, minimumAdverts >= 0 else {
            throw ValidationError("--warm-up and --minimum-adverts must not be negative")
        }
        guard (1...20).contains(rounds) else { throw ValidationError("--rounds must be from 1 to 20") }
        guard (1...1000).contains(advertBatch) else {
            throw ValidationError("--advert-batch must be from 1 to 1000 milliseconds")
        }
        _ = try selectedWorkloads()
        let kinds = try selectedReceivers()
        if kinds.contains(.gattwayBaseline) {
            guard let baseline else { throw ValidationError("the receiver gattway-baseline needs --baseline") }
            guard FileManager.default.isExecutableFile(atPath: baseline) else {
                throw ValidationError("--baseline \(baseline) is not an executable file")
            }
        }
    }

    private func selectedWorkloads() throws -> [AdvertsWorkload] {
        try BenchLocations.list(
            workloads, of: "workload",
            choices: "crowd, crowdN (N from 40 dividing 1000), or a rate from 1 to 1000, alone or followed by r, w or p"
        ) {
            AdvertsWorkload($0)
        }
    }

    private func selectedReceivers() throws -> [AdvertsReceiverKind] {
        try BenchLocations.list(
            receivers, of: "receiver",
            choices:
                "c, c-publish, c-batch, c-batch-publish, c-raw-batch, c-raw-batch-publish, gattway and/or gattway-baseline"
        ) {
            AdvertsReceiverKind(rawValue: $0)
        }
    }

    func run() async throws {
        let (located, packageRoot, build) = try BenchLocations.underTest(gattway: gattway, simulator: simulator)
        progress("… gattway under test: \(located.gattway) (\(build) build)")
        if let baseline { progress("… gattway-baseline: \(baseline)") }
        let kinds = try selectedReceivers()

        let scratch = NSTemporaryDirectory() + "gattway-bench-receiver-\(getpid())"
        try FileManager.default.createDirectory(atPath: scratch, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: scratch) }
        var compileCommand = ""
        if kinds.contains(where: \.isC) {
            compileCommand = try BenchCompiler.compile(
                source: "Benchmarks/adverts/receiver.c", output: scratch + "/receiver",
                packages: ["dbus-1", "libmosquitto"],
                packageRoot: packageRoot, scratch: scratch)
        }

        // Before any daemon starts: the probe measures the host, not what the workloads leave running.
        let floor = try wakeFloor ? WakeFloor.measure(packageRoot: packageRoot, scratch: scratch) : nil
        var rows: [AdvertsRow] = []
        for workload in try selectedWorkloads() {
            progress("… \(workload.label): starting mosquitto and the simulator")
            let stage = try await AdvertsStage(
                simulatorPath: located.simulator, scenario: workload.scenario(simulator: located.simulator),
                unixSocket: unixSocket)
            let seconds = max(duration, Double(minimumAdverts) / workload.nominalRate)
            let runner = AdvertsReceiverRunner(
                stage: stage, workload: workload, receiverBinary: scratch + "/receiver", gattwayPath: located.gattway,
                baselinePath: baseline, simulatorPath: located.simulator, batchMilliseconds: advertBatch,
                warmUp: .milliseconds(Int(warmUp * 1000)),
                window: .milliseconds(Int(seconds * 1000)))
            do {
                try await workload.prepare(stage)
                // Written before any receiver runs, so that scripts/adverts-side-by-side starts its daemons with
                // exactly the configuration measured here.
                let configuration = try runner.writeConfiguration()
                progress("… \(workload.label): Gattway's configuration: \(configuration)")
                // Receivers take turns within a round, and the order turns round every other round, so that what
                // the machine does meanwhile (its load moves the figures by a third between windows) falls on all
                // of them alike.
                for round in 1...rounds {
                    let order = round.isMultiple(of: 2) ? kinds.reversed() : kinds
                    // A C program publishing every repeat twice is no floor for a receiver that publishes only new
                    // readings.
                    for kind in order where !(workload.countsReports && kind.publishes) {
                        let row = try await runner.measure(kind, round: round)
                        progress(
                            "… \(workload.label), round \(round), \(kind.title): \(row.received) adverts in \(String(format: "%.1f", row.seconds)) s, \(String(format: "%.1f", row.microsPerAdvert)) µs each, host steal \(BenchReport.share(row.hostSteal))"
                        )
                        rows.append(row)
                    }
                }
            } catch {
                progress("simulator log:\n\(stage.simulator.process.errorOutput.suffix(1500))")
                await stage.stop()
                throw error
            }
            await stage.stop()
        }
        AdvertsReport(
            rows: rows, rounds: rounds, gattwayBinary: "\(located.gattway) (\(build) build)", baselineBinary: baseline,
            compileCommand: compileCommand, unixSocket: unixSocket, batchMilliseconds: advertBatch, wakeFloor: floor
        )
        .print()
    }
}
