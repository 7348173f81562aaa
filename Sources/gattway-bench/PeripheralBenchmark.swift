import ArgumentParser
import DBus
import Foundation
import Logging
import MQTTCore
import Mosquitto
import Synchronization
import TestWorld

/// `gattway-bench peripheral`: MQTT → notification figures of the built gattway binary against mosquitto and the
/// BlueZ simulator, whose remote central subscribes through AcquireNotify and drains at a set link rate.
///
/// Prints throughput at an unlimited and a realistic link rate, end-to-end latency percentiles at a fixed
/// publish rate (measured to the simulator's Received signal, so it includes that D-Bus hop), and for each queue
/// policy an overload run: gattway's CPU per notification (its CPU-time clock, all threads) and peak memory
/// (VmHWM), with resident memory sampled each second to show whether it stays flat.
struct PeripheralBenchmark: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "peripheral", abstract: "Local peripheral: MQTT → notification throughput, latency, CPU, memory.")

    @Option(help: "The gattway binary.") var gattway = ".build/release/gattway"
    @Option(help: "The BlueZ simulator launcher.") var simulator = "Tests/BlueZSimulator/bluez-sim"
    @Option(help: "Messages for each throughput run.") var messages = 20_000
    @Option(help: "The realistic link rate, notifications per second.") var linkRate = 500.0
    @Option(help: "Publish rate for the latency run, messages per second.") var latencyRate = 1_000.0
    @Option(help: "Length of the latency run in seconds.") var latencySeconds = 10.0
    @Option(help: "Length of each overload run in seconds.") var duration = 60.0

    static let service = "6e400001-b5a3-f393-e0a9-e50e24dcca9e"
    static let tx = "6e400003-b5a3-f393-e0a9-e50e24dcca9e"

    func run() async throws {
        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = .error
            return handler
        }
        let world = try await PeripheralBenchWorld(simulator: simulator)
        do {
            try await measure(world)
        } catch {
            await world.stop()
            throw error
        }
        await world.stop()
    }

    private func measure(_ world: PeripheralBenchWorld) async throws {
        report("gattway-bench peripheral (\(gattway))")
        for (label, rate) in [("unlimited", 0.0), ("realistic \(Int(linkRate))/s", linkRate)] {
            let count = rate == 0 ? messages : min(messages, Int(rate * 10))
            let result = try await world.withGattway(binary: gattway, policy: "backpressure", linkRate: rate) { run in
                try await run.flood(count: count)
            }
            report(
                "throughput, link \(label): \(count) messages in \(fmt(result.seconds)) s = "
                    + "\(Int(Double(count) / result.seconds)) notifications/s, "
                    + "gattway CPU \(fmt(result.cpuMicroseconds / Double(count))) µs/notification")
        }
        let latencies = try await world.withGattway(binary: gattway, policy: "backpressure", linkRate: 0) { run in
            try await run.latency(rate: latencyRate, seconds: latencySeconds)
        }
        let sorted = latencies.sorted()
        if !sorted.isEmpty {
            report(
                "latency at \(Int(latencyRate))/s (\(sorted.count) values): p50 \(fmt(sorted[sorted.count / 2] * 1000)) ms, "
                    + "p99 \(fmt(sorted[min(sorted.count - 1, sorted.count * 99 / 100)] * 1000)) ms")
        }
        for policy in ["backpressure", "drop_oldest", "drop_newest", "latest"] {
            let result = try await world.withGattway(binary: gattway, policy: policy, linkRate: linkRate) { run in
                try await run.overload(seconds: duration)
            }
            report(
                "overload \(Int(duration)) s, \(policy): published \(result.published), notified \(result.delivered), "
                    + "gattway CPU \(fmt(result.cpuMicroseconds / Double(max(1, result.delivered)))) µs/notification "
                    + "(\(fmt(result.cpuMicroseconds / Double(max(1, result.published)))) µs/published message), "
                    + "VmHWM \(result.peakKiB) KiB, VmRSS first/last \(result.firstRSSKiB)/\(result.lastRSSKiB) KiB")
        }
    }
}

private func fmt(_ value: Double) -> String { String(format: "%.2f", value) }

/// One result line on stdout, written at once (stdout into a file is block-buffered otherwise).
func report(_ text: String) {
    FileHandle.standardOutput.write(Data((text + "\n").utf8))
}

/// Progress on stderr, so that a slow phase shows where it is.
func note(_ text: String) {
    FileHandle.standardError.write(Data(("gattway-bench: " + text + "\n").utf8))
}

/// The simulator and a broker, started once; gattway is started per run with its own configuration.
final class PeripheralBenchWorld: Sendable {
    let simulator: BlueZSimulatorProcess
    let broker: MosquittoBroker
    let busAddress: String
    let port: Int
    let directory: String
    let control: DBusConnection

    init(simulator: String) async throws {
        directory = try makeTemporaryDirectory("gattway-bench-peripheral")
        // The launcher changes into its own folder: give it an absolute scenario path.
        let scenario = URL(fileURLWithPath: simulator).deletingLastPathComponent().appendingPathComponent(
            "scenarios/lock.yaml")
        self.simulator = try await BlueZSimulatorProcess(executable: simulator, scenarioPath: scenario.path)
        busAddress = self.simulator.busAddress
        broker = try await MosquittoBroker()
        port = Int(broker.port)
        control = try await DBusConnection.connect(
            to: .address(busAddress), name: "bench", logger: Logger(label: "bench"))
    }

    func stop() async {
        await control.close()
        await simulator.stop()
        await broker.stop()
    }

    func central(_ method: String, _ arguments: [DBusValue]) async throws -> [DBusValue] {
        try await control.call(
            destination: "org.gattway.Simulator1", path: "/org/gattway/simulator/central",
            interface: "org.gattway.Simulator1.Central", method: method, arguments: arguments, timeout: .seconds(30))
    }

    private static let runCounter = Counter()

    /// Starts gattway with `policy`, connects a central at `linkRate` and subscribes it, runs `body`, cleans up.
    func withGattway<T: Sendable>(
        binary: String, policy: String, linkRate: Double, _ body: (BenchRun) async throws -> T
    ) async throws -> T {
        let index = Self.runCounter.next()
        let config = directory + "/gattway-\(index).yaml"
        try """
        mqtt: { url: "mqtt://127.0.0.1:\(port)", base_topic: bench, client_id: bench-\(index) }
        state_dir: "\(directory)/state-\(index)"
        bluetooth: { adapter: hci0 }
        peripheral:
          adapter: hci0
          advertise: { local_name: bench }
          services:
            - uuid: "\(PeripheralBenchmark.service)"
              characteristics:
                - { uuid: "\(PeripheralBenchmark.tx)", name: tx, flags: [read, notify], source_topic: bench/tx, codec: raw, queue: { depth: 64, when_full: \(policy) } }
        """.write(toFile: config, atomically: true, encoding: .utf8)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: binary)
        process.arguments = ["run", "--config", config, "--log-level", "error"]
        process.environment = ProcessInfo.processInfo.environment.merging(["DBUS_SYSTEM_BUS_ADDRESS": busAddress]) {
            $1
        }
        try process.run()
        note("gattway \(index) started (policy \(policy), link rate \(linkRate)/s)")
        defer {
            process.terminate()
            let deadline = Date().addingTimeInterval(10)
            while process.isRunning && Date() < deadline { usleep(50_000) }
            if process.isRunning {
                note("gattway did not stop within 10 s of SIGTERM; killing it")
                kill(process.processIdentifier, SIGKILL)
            }
        }
        let deadline = ContinuousClock.now + .seconds(30)
        while try await central("GetApplications", []).first?.string?.contains(PeripheralBenchmark.tx) != true {
            guard ContinuousClock.now < deadline, process.isRunning else {
                throw ValidationError("gattway did not register its application within 30 s")
            }
            try await Task.sleep(for: .milliseconds(100))
        }
        note("application registered")
        let address = String(format: "10:00:00:00:00:%02X", index % 256)
        _ = try await central(
            "Connect",
            [
                .string(address),
                .stringVariantDictionary([
                    "mtu": .uint16(247), "rate": .double(linkRate), "buffer": .uint32(32),
                ]),
            ])
        defer { Task { [self] in _ = try? await central("Disconnect", [.string(address)]) } }
        _ = try await central("WriteCCC", [.string(address), .string(PeripheralBenchmark.tx), .uint16(1)])
        let mqtt = try MosquittoClient(
            options: .init(broker: MQTTBrokerURL(host: "127.0.0.1", port: port), clientID: "bench-publisher-\(index)"),
            logger: Logger(label: "bench.mqtt"))
        let runner = Task { try await mqtt.run() }
        defer { runner.cancel() }
        try await mqtt.waitUntilConnected(timeout: .seconds(10))
        note("central subscribed, publisher connected")
        let run = BenchRun(world: self, address: address, pid: process.processIdentifier, mqtt: mqtt)
        try await run.waitUntilSubscribed()
        note("first notification arrived")
        return try await body(run)
    }
}

/// One connected, subscribed central and a publisher: the measurements.
struct BenchRun: Sendable {
    let world: PeripheralBenchWorld
    let address: String
    let pid: Int32
    let mqtt: MosquittoClient

    struct Flood: Sendable {
        var seconds: Double
        var cpuMicroseconds: Double
    }
    struct Overload: Sendable {
        var published: Int
        var delivered: Int
        var cpuMicroseconds: Double
        var peakKiB: Int
        var firstRSSKiB: Int
        var lastRSSKiB: Int
    }

    func notificationsReceived() async throws -> Int {
        let stats = try await world.central("GetLinkStats", [.string(address)]).first?.stringKeyedDictionary
        return Int(stats?["notifications"]?.variantValue.uint64 ?? 0)
    }

    /// Publishes probes until the AcquireNotify session (set up in the background after the CCC write) delivers.
    func waitUntilSubscribed() async throws {
        let deadline = ContinuousClock.now + .seconds(30)
        while try await notificationsReceived() == 0 {
            guard ContinuousClock.now < deadline else { throw ValidationError("no notification within 30 s") }
            try await mqtt.publish(MQTTMessage(topic: "bench/tx", payload: [0], qos: .atLeastOnce))
            try await Task.sleep(for: .milliseconds(100))
        }
        _ = try await world.central("GetReceived", [.string(address), .string(PeripheralBenchmark.tx), .uint32(0)])
    }

    func flood(count: Int) async throws -> Flood {
        let before = try await notificationsReceived()
        let cpu = ProcessCPU(pid: pid)
        let start = ContinuousClock.now
        let publisher = Task {
            for index in 0..<count {
                try await mqtt.publish(MQTTMessage(topic: "bench/tx", payload: Self.payload(index), qos: .atLeastOnce))
            }
        }
        let deadline = start + .seconds(600)
        while try await notificationsReceived() - before < count && ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(50))
        }
        try await publisher.value
        let elapsed = ContinuousClock.now - start
        _ = try await world.central("GetReceived", [.string(address), .string(PeripheralBenchmark.tx), .uint32(0)])
        return Flood(
            seconds: Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18,
            cpuMicroseconds: cpu.microsecondsSinceStart())
    }

    func latency(rate: Double, seconds: Double) async throws -> [Double] {
        _ = try await world.central("SetReceivedSignal", [.bool(true)])
        let signals = try await world.control.signals(
            matching: DBusMatchRule(
                interface: "org.gattway.Simulator1.Central", member: "Received"), buffering: .dropNewest(limit: 100_000)
        )
        let count = Int(rate * seconds)
        let origin = ContinuousClock.now
        let collector = Task { () -> [Double] in
            var latencies: [Double] = []
            for await signal in signals {
                let arrived = ContinuousClock.now - origin
                guard let bytes = signal.arguments.last?.bytes, bytes.count >= 8 else { continue }
                let sentNanos = bytes.withUnsafeBytes { $0.loadUnaligned(as: Int64.self) }
                latencies.append(
                    (Double(arrived.components.attoseconds) / 1e18 + Double(arrived.components.seconds))
                        - Double(sentNanos) / 1e9)
                if latencies.count >= count { break }
            }
            return latencies
        }
        for index in 0..<count {
            let due = origin + .nanoseconds(Int64(Double(index) / rate * 1e9))
            try await Task.sleep(until: due, clock: .continuous)
            let now = ContinuousClock.now - origin
            let nanos = now.components.seconds * 1_000_000_000 + now.components.attoseconds / 1_000_000_000
            try await mqtt.publish(
                MQTTMessage(topic: "bench/tx", payload: withUnsafeBytes(of: nanos) { Array($0) }, qos: .atLeastOnce))
        }
        let timeout = Task {
            try await Task.sleep(for: .seconds(10))
            collector.cancel()
        }
        let latencies = await collector.value
        timeout.cancel()
        _ = try await world.central("SetReceivedSignal", [.bool(false)])
        return latencies
    }

    func overload(seconds: Double) async throws -> Overload {
        let before = try await notificationsReceived()
        let cpu = ProcessCPU(pid: pid)
        let end = ContinuousClock.now + .nanoseconds(Int64(seconds * 1e9))
        let publisher = Task { () -> Int in
            var sent = 0
            while ContinuousClock.now < end {
                try await mqtt.publish(MQTTMessage(topic: "bench/tx", payload: Self.payload(sent), qos: .atLeastOnce))
                sent += 1
            }
            return sent
        }
        var samples: [Int] = []
        while ContinuousClock.now < end {
            try await Task.sleep(for: .seconds(1))
            samples.append(ProcessCPU.status(pid: pid, field: "VmRSS"))
            // Keep the simulator's record of received values from growing during long runs.
            _ = try await world.central("GetReceived", [.string(address), .string(PeripheralBenchmark.tx), .uint32(0)])
        }
        note("overload done, waiting for the publisher")
        let published = try await publisher.value
        let delivered = try await notificationsReceived() - before
        return Overload(
            published: published, delivered: delivered, cpuMicroseconds: cpu.microsecondsSinceStart(),
            peakKiB: ProcessCPU.status(pid: pid, field: "VmHWM"), firstRSSKiB: samples.first ?? 0,
            lastRSSKiB: samples.last ?? 0)
    }

    static func payload(_ index: Int) -> [UInt8] {
        var bytes = [UInt8](repeating: 0x5A, count: 20)
        withUnsafeBytes(of: Int64(index).littleEndian) { for i in 0..<8 { bytes[i] = $0[i] } }
        return bytes
    }
}

/// CPU time of another process since a start (the process's CPU-time clock, see `BenchProcStats.cpuSeconds`); NaN
/// when the process was gone at either reading.
struct ProcessCPU: Sendable {
    let pid: Int32
    let start: Double

    init(pid: Int32) {
        self.pid = pid
        start = BenchProcStats.cpuSeconds(pid: pid) ?? .nan
    }

    func microsecondsSinceStart() -> Double { ((BenchProcStats.cpuSeconds(pid: pid) ?? .nan) - start) * 1e6 }

    /// A `kB` field of /proc/PID/status, such as VmRSS or VmHWM, in KiB (0 when the process is gone).
    static func status(pid: Int32, field: String) -> Int {
        (BenchProcStats.statusBytes(pid: pid, field: field) ?? 0) / 1024
    }
}

/// Numbers the gattway runs so each gets its own client id, state folder and central address.
final class Counter: Sendable {
    private let value = Mutex(0)
    func next() -> Int {
        value.withLock {
            $0 += 1
            return $0
        }
    }
}
