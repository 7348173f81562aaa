import DBus
import Foundation
import MQTTCore
import TestWorld

/// Starts one relay at a time on the stage, checks it uses the intended path, runs the paced phases and stops it.
struct CompareRelayRunner {
    let stage: CompareStage
    let paths: BenchPaths
    let packageRoot: String
    let duration: Double
    let minimumNotifications: Int
    /// Seconds of the extra, traced phase after each rate's that measures the latency the relay adds (0: none).
    let hopSeconds: Double

    private var relayBinary: String { stage.directory + "/relay" }
    private var brokerArguments: [String] { ["127.0.0.1", "\(stage.port)", CompareStage.topic] }

    /// Compiles Benchmarks/relay/relay.c into the stage's scratch folder; returns the command it ran.
    func compileCRelay() throws -> String {
        try BenchCompiler.compile(
            source: "Benchmarks/relay/relay.c", output: relayBinary, packages: ["dbus-1", "libmosquitto"],
            packageRoot: packageRoot, scratch: stage.directory)
    }

    func measure(_ kind: CompareRelayKind, _ path: SubscriptionPath, rates: [Double]) async throws -> [CompareRow] {
        let label = "\(kind.title(.central)) \(path.rawValue)"
        progress("… \(label): starting")
        let before = try await stage.counters()
        let relay = try await start(kind, path)
        let world = CompareRelayWorld(stage: stage, relay: relay)
        var rows: [CompareRow] = []
        do {
            try await stage.waitUntilSubscribed(relay, timeout: .seconds(90))
            try await confirmPath(path, before: before, world: world, label: label)
            for rate in rates {
                let seconds = max(duration, Double(minimumNotifications) / rate)
                let phases = BenchPhaseRunner(world: world, path: path, duration: .milliseconds(Int(seconds * 1000)))
                let phase = try await phases.run(label: "\(Int(rate))/s", rate: rate)
                var row = CompareRow(relay: kind, side: .central, phase: phase, memory: CompareMemory(pid: relay.pid))
                progress(
                    "… \(label) \(phase.label): received \(phase.received) of \(phase.sent), \(String(format: "%.1f", phase.relayMicrosPerValue)) µs/notif, \(String(format: "%.2f", phase.relayWakesPerValue)) wakes/notif, p50 \(BenchReport.ms(phase.latencyP50)), p99 \(BenchReport.ms(phase.latencyP99)), host steal \(BenchReport.share(phase.hostSteal))"
                )
                if hopSeconds > 0 && kind != .bleak {
                    row.hop = try await probeHops(world: world, path: path, rate: rate, label: label)
                }
                rows.append(row)
            }
        } catch {
            progress("\(relay.name) log (\(label)):\n\(relay.logTail(1500))")
            await relay.stop()
            throw error
        }
        await relay.stop()
        if kind == .gattway && path == .startNotify { try await stage.simulatorCall("ClearFaults") }
        return rows
    }

    /// One more phase at `rate`, traced with `BenchHopProbe`: the latency the relay adds to each value. Nil, with the
    /// reason printed, when the phase lost values or the sends and publishes did not pair.
    private func probeHops(world: CompareRelayWorld, path: SubscriptionPath, rate: Double, label: String)
        async throws -> HopFigures?
    {
        let name = "\(world.relay.name)-\(path.rawValue)-\(Int(rate))"
        let probe = try await BenchHopProbe(
            sender: stage.simulator.pid, relay: world.relay.pid, scratch: stage.directory, label: name)
        let phases = BenchPhaseRunner(world: world, path: path, duration: .milliseconds(Int(hopSeconds * 1000)))
        let phase = try await phases.run(label: "hop \(Int(rate))/s", rate: rate)
        return await probe.figures(of: phase, label: "\(label) \(Int(rate))/s")
    }

    private func start(_ kind: CompareRelayKind, _ path: SubscriptionPath) async throws -> BenchProcess {
        let environment = ["DBUS_SYSTEM_BUS_ADDRESS": stage.busAddress]
        let log = stage.directory + "/\(kind.rawValue)-\(path.rawValue).log"
        switch kind {
        case .c:
            // The relay does the hot path only: the benchmark connects the device and names the characteristic.
            let characteristic = try await stage.connectedCharacteristicPath()
            let mode = path == .startNotify ? "start" : "acquire"
            let program = BenchProcess.cProgram(relayBinary, [mode, characteristic] + brokerArguments)
            let relay = try BenchProcess(
                program.executable, program.arguments, environment: environment, logPath: log)
            _ = try await relay.waitForLine(prefix: "relay: ready", timeout: .seconds(30))
            return relay
        case .bleak:
            // Like a user's script, it finds and connects the device itself.
            try await stage.forgetDevice()
            let python = (paths.simulator as NSString).deletingLastPathComponent + "/.venv/bin/python"
            let script = packageRoot + "/Benchmarks/relay/bleak_relay.py"
            let mode = path == .startNotify ? "start" : "acquire"
            let relay = try BenchProcess(
                python, [script, mode, "hci0", CompareStage.address, BenchWorld.notifyUUID] + brokerArguments,
                environment: environment, logPath: log)
            _ = try await relay.waitForLine(prefix: "relay: ready", timeout: .seconds(90))
            return relay
        case .gattway:
            try await stage.forgetDevice()
            if path == .startNotify {
                // Gattway prefers AcquireNotify; refused, it falls back to StartNotify.
                try await stage.simulatorCall(
                    "InjectError",
                    [
                        .string("AcquireNotify"), .string("org.bluez.Error.NotSupported"),
                        .string("Operation is not supported"), .uint32(0),
                    ])
            }
            let configuration = stage.directory + "/gattway-\(path.rawValue).yaml"
            try BenchWorld.configuration(
                port: stage.port, devices: 1, qos: .atMostOnce, directory: stage.directory,
                scanPattern: BenchWorld.address(0)
            )
            .write(toFile: configuration, atomically: true, encoding: .utf8)
            return try BenchProcess(
                paths.gattway, ["run", "--config", configuration], environment: environment, logPath: log)
        }
    }

    /// Checks from the simulator's call counters that the relay subscribed the intended way.
    private func confirmPath(_ path: SubscriptionPath, before: [String: Int], world: CompareRelayWorld, label: String)
        async throws
    {
        let after = try await world.counters()
        func calls(_ method: String) -> Int {
            let key = "calls.GattCharacteristic1.\(method)"
            return (after[key] ?? 0) - (before[key] ?? 0)
        }
        let acquired = calls("AcquireNotify")
        let started = calls("StartNotify")
        switch path {
        case .acquireNotify:
            guard acquired >= 1, started == 0 else {
                throw BenchError(
                    "\(label): expected AcquireNotify only, saw AcquireNotify \(acquired), StartNotify \(started)")
            }
        case .startNotify:
            guard started >= 1 else {
                throw BenchError(
                    "\(label): expected StartNotify, saw AcquireNotify \(acquired), StartNotify \(started)")
            }
        }
    }
}
