import ArgumentParser
import Foundation
import MQTTCore
import Synchronization

/// The central bridge end to end: the BlueZ simulator's firehose devices notify seq+timestamp values, the built
/// `gattway` publishes them, and the benchmark's own MQTT subscriber checks order and loss and measures latency.
/// Runs once per subscription path (AcquireNotify, then StartNotify with AcquireNotify refused by the simulator).
struct CentralBenchmark: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "central",
        abstract: "Central bridge throughput, latency, CPU per notification, memory and /set round trips.")

    @Option(help: "Seconds per notification phase.") var duration: Double = 5
    @Option(help: "Total notifications/s asked of the simulator at saturation (all devices together).")
    var saturationRate: Double = 100_000
    @Option(
        help: "The same for the StartNotify path, whose D-Bus hop carries far less (a bigger ask only adds backlog).")
    var saturationRateStartNotify: Double = 10_000
    @Option(help: "Saturation attempts (the first at --saturation-rate, then a search for the lossless rate).")
    var saturationAttempts: Int = 4
    @Option(help: "Paced total rates (notifications/s, comma-separated) for latency and CPU.")
    var rates: String = "1000,5000"
    @Option(help: "Firehose devices (1…10).") var devices: Int = 10
    @Option(help: "Sequential /set writes for the round-trip figure (0: none).") var writes: Int = 500
    @Option(help: "MQTT QoS of Gattway's publishes and of the benchmark's subscription (0 or 1).") var qos: Int = 0
    @Option(help: "Subscription paths to run (comma-separated: AcquireNotify,StartNotify).")
    var paths: String = "AcquireNotify,StartNotify"
    @Flag(help: "Start mosquitto with set_tcp_nodelay true (Debian's default is false: Nagle on the broker's sockets).")
    var brokerNodelay = false
    @Option(help: "The gattway binary (default: next to this program).") var gattway: String?
    @Option(help: "The BlueZ simulator launcher (default: Tests/BlueZSimulator/bluez-sim of this package).")
    var simulator: String?
    @Option(
        help: """
            Gattway's mqtt.metrics_interval in seconds (default: the daemon's, 60). scripts/link-order sets 1, so that
            its short runs under callgrind include the metrics report.
            """)
    var metricsInterval: Int?

    func validate() throws {
        if let metricsInterval, !(1...86_400).contains(metricsInterval) {
            throw ValidationError("--metrics-interval must be within 1…86400 seconds")
        }
        guard (1...10).contains(devices) else {
            throw ValidationError("--devices must be within 1…10 (firehose.yaml has 10)")
        }
        guard duration >= 1 else { throw ValidationError("--duration must be at least 1 second") }
        guard qos == 0 || qos == 1 else { throw ValidationError("--qos must be 0 or 1") }
        guard saturationAttempts >= 1 else { throw ValidationError("--saturation-attempts must be at least 1") }
        guard saturationRate > 0, saturationRateStartNotify > 0 else {
            throw ValidationError("--saturation-rate and --saturation-rate-start-notify must be positive")
        }
        _ = try pacedRates()
        _ = try selectedPaths()
    }

    private func pacedRates() throws -> [Double] {
        let values = rates.split(separator: ",").map { Double($0.trimmingCharacters(in: .whitespaces)) }
        guard !values.contains(nil), values.allSatisfy({ $0! > 0 }) else {
            throw ValidationError("--rates must be positive numbers separated by commas, got \(rates)")
        }
        return values.map { $0! }
    }

    private func selectedPaths() throws -> [SubscriptionPath] {
        try BenchLocations.list(paths, of: "path", choices: "AcquireNotify and/or StartNotify") {
            SubscriptionPath(rawValue: $0)
        }
    }

    func run() async throws {
        let locations = try BenchLocations.find(gattway: gattway, simulator: simulator)
        let mqttQoS: MQTTQoS = qos == 0 ? .atMostOnce : .atLeastOnce
        var results: [PathRunResult] = []
        for (index, path) in try selectedPaths().enumerated() {
            progress("… \(path.rawValue): starting mosquitto, the simulator and gattway with \(devices) devices")
            let world = try await startWorld(path, locations, mqttQoS)
            do {
                // Writes do not depend on the notification path: measured once, in the first run.
                results.append(try await measure(path, in: world, writes: index == 0 ? writes : 0))
            } catch {
                progress("gattway log (\(path.rawValue)):\n\(world.gattway.logTail())")
                await world.stop()
                throw error
            }
            await world.stop()
        }
        BenchReport(devices: devices, duration: duration, qos: qos, brokerNoDelay: brokerNodelay, runs: results).print()
    }

    /// Starts a run's world, once more when the first start does not reach "every device subscribed": Gattway
    /// has been seen to report a device online with its characteristics missing (services not yet resolved), and
    /// the benchmark needs all devices; the failure is printed, not hidden.
    private func startWorld(_ path: SubscriptionPath, _ locations: BenchPaths, _ qos: MQTTQoS) async throws
        -> BenchWorld
    {
        for attempt in 1...2 {
            do {
                return try await BenchWorld(
                    paths: locations, devices: devices, qos: qos, refuseAcquireNotify: path == .startNotify,
                    brokerNoDelay: brokerNodelay, metricsInterval: metricsInterval, label: path.rawValue)
            } catch let error as BenchError where attempt == 1 {
                progress("… \(path.rawValue): start failed, retrying once: \(String(error.description.prefix(300)))")
            }
        }
        throw BenchError("unreachable: the second start either returns or throws")
    }

    private func measure(_ path: SubscriptionPath, in world: BenchWorld, writes: Int) async throws -> PathRunResult {
        var result = PathRunResult(path: path)
        result.fallbackConfirmed = try await confirmPath(path, in: world)
        let nudged = world.nudges.withLock { $0 }
        if !nudged.isEmpty {
            result.fallbackConfirmed +=
                "; online but never subscribed until disconnected once: "
                + nudged.map { "fh\($0)" }.joined(separator: ", ")
        }
        // The pid lets a profiler (perf record -p) attach to the gattway under test.
        progress("… \(path.rawValue): gattway pid \(world.gattway.pid); \(result.fallbackConfirmed)")
        let phases = BenchPhaseRunner(world: world, path: path, duration: .seconds(duration))
        // Saturation: first ask for far more than anything can carry. While values are lost or a backlog grows,
        // search between the highest sustained rate and the lowest failing one (starting below what was delivered).
        var rate = path == .startNotify ? saturationRateStartNotify : saturationRate
        var lossless: Double?
        var lossy: Double?
        for attempt in 1...saturationAttempts {
            let phase = try await phases.run(label: "saturation #\(attempt)", rate: rate)
            progress(
                "… \(path.rawValue): \(phase.label) asked \(Int(rate))/s: received \(phase.received) of \(phase.sent), lossless: \(phase.lossless), sustained: \(phase.sustained)"
            )
            result.saturationAttempts.append(phase)
            if phase.sustained {
                if attempt == 1 { break }  // the asked rate itself passed: nothing to search
                lossless = max(lossless ?? 0, rate)
            } else {
                lossy = min(lossy ?? .infinity, rate)
            }
            guard let high = lossy else { break }
            if let low = lossless {
                rate = ((low * high).squareRoot()).rounded()
                if high / low < 1.15 { break }  // close enough for a figure that varies ±10 % run to run
            } else {
                rate = max(100, (min(phase.deliveredRate, high) * 0.7).rounded())
            }
        }
        for paced in try pacedRates() {
            let phase = try await phases.run(label: "\(Int(paced))/s", rate: paced)
            progress(
                "… \(path.rawValue): \(phase.label): p50 \(BenchReport.ms(phase.latencyP50)) p99 \(BenchReport.ms(phase.latencyP99)) (after 0.5 s: \(BenchReport.ms(phase.latencyP99AfterWarmUp)))"
            )
            result.paced.append(phase)
        }
        if writes > 0 {
            result.write = try await BenchWriteRoundTrip(world: world).run(count: writes)
        }
        result.peakResidentBytes = BenchProcStats.statusBytes(pid: world.gattway.pid, field: "VmHWM")
        return result
    }

    /// Checks, from the simulator's call counters and Gattway's log, that Gattway uses the intended path.
    private func confirmPath(_ path: SubscriptionPath, in world: BenchWorld) async throws -> String {
        let counters = try await world.counters()
        let acquired = counters["calls.GattCharacteristic1.AcquireNotify"] ?? 0
        let started = counters["calls.GattCharacteristic1.StartNotify"] ?? 0
        let fallbacks =
            (try? String(contentsOfFile: world.gattway.logPath, encoding: .utf8))?
            .components(separatedBy: "device.notify.fallback").count ?? 1
        let summary = "AcquireNotify calls \(acquired), StartNotify calls \(started), fallbacks logged \(fallbacks - 1)"
        switch path {
        case .acquireNotify:
            guard acquired >= world.devices, started == 0 else {
                throw BenchError("expected AcquireNotify only: \(summary)")
            }
        case .startNotify:
            // A nudged device subscribes again after its reconnect, so there may be more calls than devices.
            guard started >= world.devices, fallbacks - 1 >= world.devices else {
                throw BenchError("expected the StartNotify fallback on every device: \(summary)")
            }
        }
        return summary
    }
}

/// Prints a progress line at once (stdout is block-buffered when it is not a terminal).
func progress(_ line: String) {
    print(line)
    fflush(nil)  // all streams: `stdout` itself is a global var Swift 6 refuses to touch
}

/// Where the programs under test are.
enum BenchLocations {
    /// The directory of this program.
    static var binDirectory: String {
        let executable =
            (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe"))
            ?? CommandLine.arguments[0]
        return (executable as NSString).deletingLastPathComponent
    }

    /// The package this program was built from: the ancestor of .build/<triple>/<configuration>/ that holds the
    /// BlueZ simulator.
    static func packageRoot() -> String? {
        var directory = binDirectory
        while directory != "/" && !directory.isEmpty {
            if FileManager.default.isExecutableFile(atPath: directory + "/Tests/BlueZSimulator/bluez-sim") {
                return directory
            }
            directory = (directory as NSString).deletingLastPathComponent
        }
        return nil
    }

    /// The programs a side-by-side benchmark compares: the given gattway, else this package's release build when it
    /// is built, else the one next to this program; with the package root and which build the binary is.
    static func underTest(
        gattway: String?, simulator: String?
    ) throws -> (paths: BenchPaths, packageRoot: String, build: String) {
        var chosen = gattway
        if chosen == nil, let root = packageRoot(),
            FileManager.default.isExecutableFile(atPath: root + "/.build/release/gattway")
        {
            chosen = root + "/.build/release/gattway"
        }
        let located = try find(gattway: chosen, simulator: simulator)
        // bluez-sim lives in <root>/Tests/BlueZSimulator.
        var root = located.simulator
        for _ in 0..<3 { root = (root as NSString).deletingLastPathComponent }
        let build =
            located.gattway.contains("/release/")
            ? "release" : (located.gattway.contains("/debug/") ? "debug" : "unknown")
        return (located, root, build)
    }

    /// A comma-separated option as values, or a clear error naming the one not understood.
    static func list<Value>(
        _ text: String, of what: String, choices: String, _ make: (String) -> Value?
    ) throws -> [Value] {
        try text.split(separator: ",").map { name in
            guard let value = make(name.trimmingCharacters(in: .whitespaces)) else {
                throw ValidationError("unknown \(what) \(name); use \(choices)")
            }
            return value
        }
    }

    static func find(gattway: String?, simulator: String?) throws -> BenchPaths {
        let gattwayPath = gattway ?? binDirectory + "/gattway"
        guard FileManager.default.isExecutableFile(atPath: gattwayPath) else {
            throw BenchError(
                "no gattway binary at \(gattwayPath); build it (swift build -c release --product gattway) or pass --gattway"
            )
        }
        let simulatorPath = simulator ?? packageRoot().map { $0 + "/Tests/BlueZSimulator/bluez-sim" }
        guard let simulatorPath, FileManager.default.isExecutableFile(atPath: simulatorPath) else {
            throw BenchError("the BlueZ simulator (Tests/BlueZSimulator/bluez-sim) was not found; pass --simulator")
        }
        let scenario = (simulatorPath as NSString).deletingLastPathComponent + "/scenarios/firehose.yaml"
        guard FileManager.default.fileExists(atPath: scenario) else { throw BenchError("missing scenario \(scenario)") }
        return BenchPaths(gattway: gattwayPath, simulator: simulatorPath, scenario: scenario)
    }
}
