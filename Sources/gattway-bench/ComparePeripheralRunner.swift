import DBus
import Foundation
import Logging
import MQTTCore
import Mosquitto
import TestWorld

/// The local peripheral's path in `compare`: starts one peripheral at a time on the stage (the C program of
/// Benchmarks/peripheral/peripheral.c, or Gattway configured as `gattway-bench peripheral` configures it), lets the
/// simulator's remote central subscribe one way (AcquireNotify, or StartNotify through `SetAcquireNotify(false)`),
/// checks from the simulator's counters that it did, then runs the paced phases.
struct ComparePeripheralRunner {
    let stage: CompareStage
    let paths: BenchPaths
    let packageRoot: String
    let duration: Double
    let minimumNotifications: Int
    /// Seconds of the extra, traced phase after each rate's that measures the latency the peripheral adds (0: none).
    let hopSeconds: Double

    private var peripheralBinary: String { stage.directory + "/peripheral" }
    private static let adapterPath = "/org/bluez/hci0"

    /// Compiles Benchmarks/peripheral/peripheral.c into the stage's scratch folder; returns the command it ran.
    func compileCPeripheral() throws -> String {
        try BenchCompiler.compile(
            source: "Benchmarks/peripheral/peripheral.c", output: peripheralBinary,
            packages: ["dbus-1", "libmosquitto"], packageRoot: packageRoot, scratch: stage.directory)
    }

    func measure(_ kind: CompareRelayKind, _ way: SubscriptionPath, rates: [Double], run index: Int) async throws
        -> [CompareRow]
    {
        let label = "\(kind.title(.peripheral)) \(way.rawValue)"
        progress("… \(label): starting")
        let central = String(format: "C0:FF:EE:00:00:%02X", index % 256)
        var logger = Logger(label: "gattway.bench.publisher")
        logger.logLevel = .warning  // connection chatter would interleave with the figures
        let publisher = try MosquittoClient(
            options: .init(
                broker: MQTTBrokerURL(host: "127.0.0.1", port: Int(stage.port)),
                clientID: "gattway-bench-publisher-\(index)"),
            logger: logger)
        let publisherTask = Task { try await publisher.run() }
        let peripheral: BenchProcess
        do {
            try await publisher.waitUntilConnected(timeout: .seconds(10))
            peripheral = try await start(kind, way: way)
        } catch {
            publisherTask.cancel()
            throw error
        }
        var rows: [CompareRow] = []
        do {
            try await waitForApplication(of: peripheral, registered: true)
            try await subscribe(central: central, way: way, peripheral: peripheral, publisher: publisher, label: label)
            for rate in rates {
                let seconds = max(duration, Double(minimumNotifications) / rate)
                let phase = try await ComparePeripheralPhase(
                    stage: stage, peripheral: peripheral, publisher: publisher, central: central, way: way,
                    seconds: seconds
                ).run(label: "\(Int(rate))/s", rate: rate)
                var row = CompareRow(
                    relay: kind, side: .peripheral, phase: phase, memory: CompareMemory(pid: peripheral.pid))
                progress(
                    "… \(label) \(phase.label): central received \(phase.received) of \(phase.sent), \(String(format: "%.1f", phase.relayMicrosPerValue)) µs/notif, \(String(format: "%.2f", phase.relayWakesPerValue)) wakes/notif, p50 \(BenchReport.ms(phase.latencyP50)), p99 \(BenchReport.ms(phase.latencyP99)), host steal \(BenchReport.share(phase.hostSteal))"
                )
                if hopSeconds > 0 {
                    row.hop = try await probeHops(
                        peripheral: peripheral, publisher: publisher, central: central, way: way, rate: rate,
                        label: label)
                }
                rows.append(row)
            }
        } catch {
            progress("\(peripheral.name) log (\(label)):\n\(peripheral.logTail(1500))")
            await finish(peripheral, central: central, publisherTask: publisherTask)
            throw error
        }
        await finish(peripheral, central: central, publisherTask: publisherTask)
        try await waitForApplication(of: peripheral, registered: false)
        return rows
    }

    /// One more phase at `rate`, traced with `BenchHopProbe` from the broker's write of each PUBLISH to the
    /// notification's arrival at the central's side: the peripheral's send into the AcquireNotify socket, or on
    /// StartNotify dbus-daemon's send of the signal to the central, so that the bus's routing counts on this side
    /// as on the central one. Nil, with the reason printed, when the phase lost values or the two streams did not
    /// pair.
    private func probeHops(
        peripheral: BenchProcess, publisher: MosquittoClient, central: String, way: SubscriptionPath, rate: Double,
        label: String
    ) async throws -> HopFigures? {
        guard let broker = await stage.broker.pid else { throw BenchError("the broker is not running") }
        let last: Int32
        switch way {
        case .acquireNotify: last = peripheral.pid
        case .startNotify:
            guard let bus = stage.simulator.busDaemonPID else {
                throw BenchError("the simulator's dbus-daemon is gone")
            }
            last = bus
        }
        let probe = try await BenchHopProbe(
            sender: broker, relay: last, scratch: stage.directory,
            label: "\(peripheral.name)-peripheral-\(way.rawValue)-\(Int(rate))")
        let phase = try await ComparePeripheralPhase(
            stage: stage, peripheral: peripheral, publisher: publisher, central: central, way: way,
            seconds: hopSeconds
        ).run(label: "hop \(Int(rate))/s", rate: rate)
        return await probe.figures(of: phase, label: "\(label) \(Int(rate))/s")
    }

    private func finish(_ peripheral: BenchProcess, central: String, publisherTask: Task<Void, any Error>) async {
        _ = try? await stage.centralCall("Disconnect", [.string(central)])
        await peripheral.stop()
        publisherTask.cancel()
        _ = await publisherTask.result
        _ = try? await stage.centralCall("SetAcquireNotify", [.bool(true)])
    }

    private func start(_ kind: CompareRelayKind, way: SubscriptionPath) async throws -> BenchProcess {
        let environment = ["DBUS_SYSTEM_BUS_ADDRESS": stage.busAddress]
        let log = stage.directory + "/peripheral-\(kind.rawValue)-\(way.rawValue).log"
        switch kind {
        case .c:
            let program = BenchProcess.cProgram(
                peripheralBinary, [Self.adapterPath, "127.0.0.1", "\(stage.port)", CompareStage.peripheralTopic])
            let peripheral = try BenchProcess(
                program.executable, program.arguments, environment: environment, logPath: log)
            _ = try await peripheral.waitForLine(prefix: "peripheral: ready", timeout: .seconds(30))
            return peripheral
        case .gattway:
            let configuration = stage.directory + "/gattway-peripheral-\(way.rawValue).yaml"
            try Self.gattwayConfiguration(port: stage.port, directory: stage.directory, label: way.rawValue)
                .write(toFile: configuration, atomically: true, encoding: .utf8)
            return try BenchProcess(
                paths.gattway, ["run", "--config", configuration], environment: environment, logPath: log)
        case .bleak:
            throw BenchError("no bleak peripheral: the peripheral side runs c and gattway")
        }
    }

    /// The peripheral section of `gattway-bench peripheral` (its service and characteristic, read + notify, raw
    /// codec, the default queue), on the stage's broker, without devices.
    static func gattwayConfiguration(port: UInt16, directory: String, label: String) -> String {
        """
        mqtt: { url: "mqtt://127.0.0.1:\(port)", base_topic: \(BenchWorld.base), client_id: gattway-bench-peripheral-\(label) }
        state_dir: "\(directory)/state-peripheral-\(label)"
        log_level: info
        bluetooth: { adapter: hci0 }
        peripheral:
          adapter: hci0
          advertise: { local_name: bench }
          services:
            - uuid: "\(PeripheralBenchmark.service)"
              characteristics:
                - { uuid: "\(PeripheralBenchmark.tx)", name: tx, flags: [read, notify], source_topic: \(CompareStage.peripheralTopic), codec: raw }

        """
    }

    /// Waits until the simulator lists (or no longer lists) an application with the benchmark's characteristic.
    private func waitForApplication(of peripheral: BenchProcess, registered: Bool) async throws {
        let deadline = ContinuousClock.now + .seconds(30)
        while true {
            let listed = try await stage.centralCall("GetApplications").first?.string?.contains(
                PeripheralBenchmark.tx)
            if listed == registered { return }
            if registered {
                guard peripheral.isRunning else {
                    throw BenchError("\(peripheral.name) exited: \(peripheral.logTail())")
                }
            }
            guard ContinuousClock.now < deadline else {
                throw BenchError(
                    "\(peripheral.name)'s application was \(registered ? "not registered" : "still registered") after 30 s: \(peripheral.logTail(800))"
                )
            }
            try await Task.sleep(for: .milliseconds(50))
        }
    }

    /// Connects the central (MTU 247, no link rate limit), enables notifications the chosen way, publishes probes
    /// until one arrives, and checks from the simulator's counters that the values came that way only.
    private func subscribe(
        central: String, way: SubscriptionPath, peripheral: BenchProcess, publisher: MosquittoClient, label: String
    ) async throws {
        try await stage.centralCall("SetAcquireNotify", [.bool(way == .acquireNotify)])
        try await stage.centralCall(
            "Connect", [.string(central), .stringVariantDictionary(["mtu": .uint16(247), "rate": .double(0)])])
        let before = try await stage.counters()
        let code = try await stage.centralCall(
            "WriteCCC", [.string(central), .string(PeripheralBenchmark.tx), .uint16(1)])
        guard code.first?.byte == 0 else { throw BenchError("\(label): the CCC write answered \(code)") }
        let deadline = ContinuousClock.now + .seconds(30)
        while try await notificationsReceived(central) == 0 {
            guard peripheral.isRunning else { throw BenchError("\(peripheral.name) exited: \(peripheral.logTail())") }
            guard ContinuousClock.now < deadline else {
                throw BenchError("\(label): no probe reached the central within 30 s: \(peripheral.logTail(800))")
            }
            try await publisher.publish(
                MQTTMessage(topic: CompareStage.peripheralTopic, payload: [0], qos: .atMostOnce))
            try await Task.sleep(for: .milliseconds(100))
        }
        let after = try await stage.counters()
        func delta(_ key: String) -> Int { (after[key] ?? 0) - (before[key] ?? 0) }
        let acquired = delta("server.notify_acquired")
        let signalled = delta("server.notify_signal_values")
        let throughSocket = delta("server.notify_fd_values")
        switch way {
        case .acquireNotify:
            guard acquired >= 1, signalled == 0, throughSocket >= 1 else {
                throw BenchError(
                    "\(label): expected values through an AcquireNotify socket only; saw \(acquired) acquired, \(throughSocket) socket values, \(signalled) PropertiesChanged values"
                )
            }
        case .startNotify:
            guard acquired == 0, throughSocket == 0, signalled >= 1 else {
                throw BenchError(
                    "\(label): expected PropertiesChanged values only; saw \(acquired) acquired, \(throughSocket) socket values, \(signalled) PropertiesChanged values"
                )
            }
        }
    }

    private func notificationsReceived(_ central: String) async throws -> Int {
        let stats = try await stage.centralCall("GetLinkStats", [.string(central)]).first?.stringKeyedDictionary
        return Int(stats?["notifications"]?.variantValue.uint64 ?? 0)
    }
}
