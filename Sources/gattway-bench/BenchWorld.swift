import DBus
import Foundation
import Logging
import MQTTCore
import Mosquitto
import Synchronization
import TestWorld

/// One run of the central bridge under test: mosquitto on a free port, the BlueZ simulator with the firehose
/// scenario, the built `gattway` binary configured for `devices` firehose devices, and the benchmark's subscriber.
final class BenchWorld: BenchPhaseWorld {
    static let notifyUUID = "0000ff01-0000-1000-8000-00805f9b34fb"
    static let base = "gattway"

    let devices: Int
    let directory: String
    let broker: MosquittoBroker
    let simulator: BlueZSimulatorProcess
    let gattway: BenchProcess
    var relay: BenchProcess { gattway }
    let control: DBusConnection
    let subscriber: BenchSubscriber
    /// Devices that had to be disconnected once before Gattway subscribed them (see `waitUntilReady`).
    let nudges = Mutex<[Int]>([])
    private let subscriberTask: Task<Void, any Error>
    private let consumerTask: Task<Void, Never>

    static func address(_ device: Int) -> String { String(format: "F1:0E:00:00:00:%02X", device) }

    /// Starts everything and waits until every device is online and subscribed. `refuseAcquireNotify` makes the
    /// simulator fail every AcquireNotify, so Gattway must fall back to StartNotify.
    init(
        paths: BenchPaths, devices: Int, qos: MQTTQoS, refuseAcquireNotify: Bool, brokerNoDelay: Bool,
        metricsInterval: Int? = nil, label: String
    ) async throws {
        self.devices = devices
        directory = try makeTemporaryDirectory("gattway-bench-\(label)")
        broker = try await MosquittoBroker(extraConfiguration: ["set_tcp_nodelay \(brokerNoDelay)"])
        let port = broker.port
        simulator = try await BlueZSimulatorProcess(
            executable: paths.simulator, scenarioPath: paths.scenario, timeout: .seconds(180))
        let busAddress = simulator.busAddress
        control = try await DBusConnection.connect(
            to: .address(busAddress), name: "bench-control", logger: Logger(label: "gattway.bench.control"))

        subscriber = try BenchSubscriber(port: port, base: Self.base, qos: qos)
        let client = subscriber.client
        subscriberTask = Task { try await client.run() }
        try await subscriber.start()
        let subscriber = subscriber
        consumerTask = Task { await subscriber.consume() }

        if refuseAcquireNotify {
            try await Self.call(
                control, "InjectError",
                [
                    .string("AcquireNotify"), .string("org.bluez.Error.NotSupported"),
                    .string("Operation is not supported"), .uint32(0),
                ])
        }
        try Self.configuration(
            port: port, devices: devices, qos: qos, directory: directory, metricsInterval: metricsInterval
        )
        .write(toFile: directory + "/gattway.yaml", atomically: true, encoding: .utf8)
        gattway = try BenchProcess(
            paths.gattway, ["run", "--config", directory + "/gattway.yaml"],
            environment: ["DBUS_SYSTEM_BUS_ADDRESS": busAddress], logPath: directory + "/gattway.log")
        do {
            try await waitUntilReady(timeout: .seconds(60))
        } catch {
            await stop()
            throw error
        }
    }

    /// Devices `fh0…`: `data` (ff01, notify, raw: the 12 bytes arrive unchanged) and `cmd` (ff02, write with
    /// response, hex). Values are not retained, so the broker does no per-value retained-store work.
    ///
    /// `scanPattern`: a discovery filter (`bluetooth.scan.pattern`, an address or name prefix), so that bluetoothd
    /// reports only the devices relayed and Gattway does not take in the adverts of the scenario's others.
    /// `metricsInterval`: `mqtt.metrics_interval`, the daemon's default when nil.
    static func configuration(
        port: UInt16, devices: Int, qos: MQTTQoS, directory: String, scanPattern: String? = nil,
        metricsInterval: Int? = nil
    ) -> String {
        var yaml = """
            mqtt:
              url: "mqtt://127.0.0.1:\(port)"
              base_topic: \(base)
              client_id: gattway-bench
              qos: \(qos.rawValue)\(metricsInterval.map { "\n  metrics_interval: \($0)" } ?? "")
            state_dir: "\(directory)/state"
            log_level: info
            bluetooth:
              adapter: hci0
              max_concurrent_connects: 8
              request_timeout: 5
              connect_timeout: 10
              reconnect: { initial: 0.2, max: 1 }\(scanPattern.map { "\n  scan: { pattern: \"\($0)\" }" } ?? "")
            devices:

            """
        for device in 0..<devices {
            yaml += """
                  - name: fh\(device)
                    address: "\(address(device))"
                    characteristics:
                      - { name: data, service: "ff00", uuid: "ff01", notify: true, codec: raw, retain: false }
                      - { name: cmd, service: "ff00", uuid: "ff02", write: with_response, codec: hex, retain: false }

                """
        }
        return yaml
    }

    private func waitUntilReady(timeout: Duration) async throws {
        let deadline = ContinuousClock.now + timeout
        while subscriber.onlineDevices.count < devices {
            guard gattway.isRunning else { throw BenchError("gattway exited: \(gattway.logTail())") }
            guard ContinuousClock.now < deadline else {
                throw BenchError(
                    "only \(subscriber.onlineDevices.count) of \(devices) devices online after \(timeout): \(gattway.logTail())"
                )
            }
            try await Task.sleep(for: .milliseconds(50))
        }
        // Gattway has been seen to put a device online before its characteristics were exported (logged as
        // device.characteristic.missing), and then never subscribe. Such a device is disconnected (as if the link
        // dropped) after `stuckLimit`, so Gattway reconnects it; each such nudge is counted and reported.
        let stuckLimit = Duration.seconds(5)
        for device in 0..<devices {
            var stuckSince = ContinuousClock.now
            while try await Self.call(
                control, "IsSubscribed", [.string(Self.address(device)), .string(Self.notifyUUID)]
            )
            .first?.bool != true {
                guard ContinuousClock.now < deadline else {
                    throw BenchError(
                        "fh\(device) is online but not subscribed after \(timeout): \(gattway.logTail(800))")
                }
                if ContinuousClock.now - stuckSince > stuckLimit {
                    try await Self.call(control, "Disconnect", [.string(Self.address(device)), .string("timeout")])
                    nudges.withLock { $0.append(device) }
                    stuckSince = ContinuousClock.now
                }
                try await Task.sleep(for: .milliseconds(50))
            }
        }
    }

    @discardableResult
    static func call(_ control: DBusConnection, _ method: String, _ arguments: [DBusValue] = []) async throws
        -> [DBusValue]
    {
        do {
            return try await control.call(
                destination: "org.gattway.Simulator1", path: "/org/gattway/simulator",
                interface: "org.gattway.Simulator1",
                method: method, arguments: arguments, timeout: .seconds(30))
        } catch {
            throw BenchError("simulator \(method) failed: \(error)")
        }
    }

    @discardableResult
    func call(_ method: String, _ arguments: [DBusValue] = []) async throws -> [DBusValue] {
        try await Self.call(control, method, arguments)
    }

    /// The simulator's counters (notifications_sent, notify_dropped_eagain, calls.…).
    func counters() async throws -> [String: Int] {
        let dictionary = try await call("GetCounters").first?.stringKeyedDictionary ?? [:]
        return dictionary.compactMapValues { $0.uint64.map(Int.init) }
    }

    /// Sets every device's notification rate (0 stops it); each call restarts the device's sequence at 0.
    func setRate(total: Double) async throws {
        for device in 0..<devices {
            try await call(
                "StartNotifying",
                [
                    .string(Self.address(device)), .string(Self.notifyUUID), .double(total / Double(devices)),
                    .uint32(0),
                    .string("seq-timestamp"),
                ])
        }
    }

    func stop() async {
        await gattway.stop()
        // The client's run() returns on cancellation, after which its message stream ends.
        subscriberTask.cancel()
        _ = await subscriberTask.result
        consumerTask.cancel()
        await control.close()
        await simulator.stop()
        await broker.stop()
        try? FileManager.default.removeItem(atPath: directory)
    }
}

/// Where the programs under test are.
struct BenchPaths: Sendable {
    let gattway: String
    let simulator: String
    let scenario: String
}
