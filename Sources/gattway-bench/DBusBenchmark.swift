import ArgumentParser
import DBus
import Foundation
import Logging

/// `gattway-bench dbus`: call and signal throughput through a private dbus-daemon it starts itself.
struct DBusBenchmark: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "dbus", abstract: "D-Bus call and signal throughput.")

    @Option(help: "Seconds per call measurement.") var seconds: Double = 3
    @Option(help: "Concurrent calls in the concurrent measurement.") var concurrency: Int = 32
    @Option(help: "PropertiesChanged-shaped signals to send in the signal measurement.") var signals: Int = 100_000
    @Option(help: "Bytes in each signal's `ay` Value.") var valueSize: Int = 20

    func run() async throws {
        let bus = try await BenchmarkBus.start()
        defer { bus.stop() }
        var logger = Logger(label: "gattway.bench.dbus")
        logger.logLevel = .warning
        let server = try await DBusConnection.connect(to: .address(bus.address), name: "bench-server", logger: logger)
        let client = try await DBusConnection.connect(to: .address(bus.address), name: "bench-client", logger: logger)
        try await server.export(
            path: "/org/gattway/Bench",
            interfaces: [
                DBusInterface(
                    name: "org.gattway.Bench",
                    methods: [
                        DBusMethod(name: "Ping", handler: .sync { _ in [] })
                    ])
            ])
        let destination = server.uniqueName
        let ping: @Sendable () async throws -> Void = {
            _ = try await client.call(
                destination: destination, path: "/org/gattway/Bench", interface: "org.gattway.Bench", method: "Ping")
        }
        let duration = Duration.milliseconds(Int(seconds * 1000))

        let sequential = try await measure(duration) {
            try await ping()
            return 1
        }
        report("calls, sequential", sequential.count, sequential.elapsed, unit: "calls")

        // Long-lived workers, each keeping one call in flight, so task creation is not part of the figure.
        let parallelStart = ContinuousClock.now
        let parallelCount = try await withThrowingTaskGroup(of: Int.self) { group in
            for _ in 0..<concurrency {
                group.addTask {
                    var calls = 0
                    while ContinuousClock.now - parallelStart < duration {
                        try await ping()
                        calls += 1
                    }
                    return calls
                }
            }
            return try await group.reduce(0, +)
        }
        let parallel = (count: parallelCount, elapsed: ContinuousClock.now - parallelStart)
        report("calls, \(concurrency) concurrent", parallel.count, parallel.elapsed, unit: "calls")

        try await measureStoredPropertyUpdates(server: server, duration: duration)
        try await measureSignals(server: server, client: client)
        await client.close()
        await server.close()
    }

    private func measureSignals(server: DBusConnection, client: DBusConnection) async throws {
        let path = "/org/gattway/Bench/char0"
        let stream = try await client.signals(
            matching: DBusMatchRule(
                sender: server.uniqueName, interface: "org.freedesktop.DBus.Properties", member: "PropertiesChanged",
                path: path),
            buffering: .dropNewest(limit: signals))
        let count = signals
        let size = max(4, valueSize)
        let start = ContinuousClock.now
        async let received: (Int, Int) = {
            var seen = 0
            var outOfOrder = 0
            for await signal in stream {
                let bytes = signal.arguments[1].stringKeyedDictionary?["Value"]?.bytes ?? []
                let index = bytes.prefix(4).reversed().reduce(0) { $0 << 8 | Int($1) }
                if index != seen { outOfOrder += 1 }
                seen += 1
                if seen == count { break }
            }
            return (seen, outOfOrder)
        }()
        var value = [UInt8](repeating: 0x5a, count: size)
        for index in 0..<count {
            value[0] = UInt8(truncatingIfNeeded: index)
            value[1] = UInt8(truncatingIfNeeded: index >> 8)
            value[2] = UInt8(truncatingIfNeeded: index >> 16)
            value[3] = UInt8(truncatingIfNeeded: index >> 24)
            try await server.propertiesChanged(
                path: path, interface: "org.bluez.GattCharacteristic1", changed: ["Value": .bytes(value)])
        }
        let sent = ContinuousClock.now - start
        let (seen, outOfOrder) = await received
        let elapsed = ContinuousClock.now - start
        report("signals sent (PropertiesChanged, ay[\(size)])", count, sent, unit: "signals")
        report("signals received through a match rule", seen, elapsed, unit: "signals")
        print("  received \(seen)/\(count), out of order \(outOfOrder), dropped \(stream.droppedCount)")
    }

    /// How fast a stored property (a GATT characteristic's Value) can be updated, each update emitting
    /// PropertiesChanged: the peripheral side's hot path.
    private func measureStoredPropertyUpdates(server: DBusConnection, duration: Duration) async throws {
        let path = "/org/gattway/Bench/char1"
        try await server.export(
            path: path,
            interfaces: [
                DBusInterface(
                    name: "org.bluez.GattCharacteristic1",
                    properties: [DBusProperty(name: "Value", signature: "ay", source: .stored(.bytes([])))])
            ])
        var value = [UInt8](repeating: 0x11, count: max(4, valueSize))
        let updates = try await measure(duration) {
            value[0] &+= 1
            try await server.setProperty(
                path: path, interface: "org.bluez.GattCharacteristic1", name: "Value", value: .bytes(value))
            return 1
        }
        report("stored Value updates with PropertiesChanged", updates.count, updates.elapsed, unit: "updates")
    }

    private func measure(_ duration: Duration, _ round: () async throws -> Int) async throws -> (
        count: Int, elapsed: Duration
    ) {
        let start = ContinuousClock.now
        var count = 0
        while ContinuousClock.now - start < duration { count += try await round() }
        return (count, ContinuousClock.now - start)
    }

    private func report(_ what: String, _ count: Int, _ elapsed: Duration, unit: String) {
        let secondsElapsed = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        let rate = Double(count) / secondsElapsed
        let micros = secondsElapsed / Double(max(count, 1)) * 1e6
        print(
            "\(what): \(Int(rate)) \(unit)/s (\(count) in \(String(format: "%.2f", secondsElapsed)) s, \(String(format: "%.1f", micros)) µs each)"
        )
    }
}

/// A private dbus-daemon for the benchmark (a small copy of the test world's launcher, which is test-only).
struct BenchmarkBus {
    let address: String
    let process: Process
    let directory: String

    static func start() async throws -> BenchmarkBus {
        let directory = NSTemporaryDirectory() + "gattway-bench-bus-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let config = """
            <busconfig><type>session</type><listen>unix:path=\(directory)/bus</listen><auth>EXTERNAL</auth>
            <policy context="default"><allow send_destination="*" eavesdrop="true"/><allow eavesdrop="true"/><allow own="*"/></policy>
            <limit name="max_incoming_bytes">1000000000</limit><limit name="max_outgoing_bytes">1000000000</limit>
            <limit name="max_replies_per_connection">50000</limit></busconfig>
            """
        try config.write(toFile: directory + "/bus.conf", atomically: true, encoding: .utf8)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = [
            "dbus-daemon", "--config-file=\(directory)/bus.conf", "--nofork", "--nopidfile", "--print-address=1",
        ]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        do { try process.run() } catch {
            throw ValidationError("cannot start dbus-daemon (is it installed?): \(error)")
        }
        // The daemon prints its address as soon as it listens; wait for the socket instead of reading the pipe.
        let deadline = ContinuousClock.now + .seconds(20)
        while !FileManager.default.fileExists(atPath: directory + "/bus") {
            guard process.isRunning, ContinuousClock.now < deadline else {
                throw ValidationError("dbus-daemon did not start listening within 20 s")
            }
            try await Task.sleep(for: .milliseconds(10))
        }
        return BenchmarkBus(address: "unix:path=\(directory)/bus", process: process, directory: directory)
    }

    func stop() {
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        try? FileManager.default.removeItem(atPath: directory)
    }
}
