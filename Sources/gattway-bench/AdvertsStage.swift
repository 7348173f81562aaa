import DBus
import Foundation
import Logging
import MQTTCore
import Mosquitto
import Synchronization

/// The world one `adverts` workload runs in, for each receiver in turn: mosquitto on a free port, the BlueZ
/// simulator (with the sensor crowd, or empty for a single fast sensor added through its control interface), and a
/// subscriber counting the decoded states published on `gattway/+/state`.
final class AdvertsStage: Sendable {
    let directory: String
    let port: UInt16
    let busAddress: String
    let broker: BenchProcess
    let simulator: BenchProcess
    let control: DBusConnection
    let states: AdvertsStateCounter
    private let subscriberTask: Task<Void, any Error>
    private let consumerTask: Task<Void, Never>

    init(simulatorPath: String, scenario: String?) async throws {
        var template = Array("\(NSTemporaryDirectory())gattway-bench-adverts-XXXXXX".utf8CString)
        guard let made = mkdtemp(&template) else { throw BenchError("cannot make a temporary directory: errno \(errno)") }
        directory = String(cString: made)
        port = try BenchFreePort.loopback()
        let user = String(cString: getpwuid(getuid()).pointee.pw_name)
        let brokerConfig = """
            listener \(port) 127.0.0.1
            max_queued_messages 0
            persistence false
            log_dest stderr
            user \(user)
            allow_anonymous true

            """
        try brokerConfig.write(toFile: directory + "/mosquitto.conf", atomically: true, encoding: .utf8)
        broker = try BenchProcess("mosquitto", ["-c", directory + "/mosquitto.conf"], logPath: directory + "/mosquitto.log")
        try await BenchFreePort.waitUntilAccepting(port: port, process: broker)
        simulator = try BenchProcess(
            simulatorPath, scenario.map { ["--scenario", $0] } ?? [], logPath: directory + "/simulator.log")
        let prefix = "DBUS_SYSTEM_BUS_ADDRESS="
        busAddress = String(try await simulator.waitForLine(prefix: prefix, timeout: .seconds(180)).dropFirst(prefix.count))
        control = try await DBusConnection.connect(
            to: .address(busAddress), name: "bench-control", logger: Logger(label: "gattway.bench.control"))
        states = AdvertsStateCounter(port: port)
        let client = states.client
        subscriberTask = Task { try await client.run() }
        try await states.start()
        let states = states
        consumerTask = Task { await states.consume() }
    }

    @discardableResult
    func simulatorCall(_ method: String, _ arguments: [DBusValue] = []) async throws -> [DBusValue] {
        try await BenchWorld.call(control, method, arguments)
    }

    /// Advertisement reports the simulator has sent so far (to anyone discovering or not).
    func reportsSent() async throws -> Int {
        let counters = try await simulatorCall("GetCounters").first?.stringKeyedDictionary ?? [:]
        return counters["adv_reports"]?.uint64.map(Int.init) ?? 0
    }

    /// The simulator's Python process and its private dbus-daemon (its child), whose CPU is reported so that a
    /// simulator or bus at its limit shows.
    var busDaemonPID: Int32? {
        let path = "/proc/\(simulator.pid)/task/\(simulator.pid)/children"
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else { return nil }
        return text.split(separator: " ").compactMap { Int32($0) }.first { pid in
            ((try? String(contentsOfFile: "/proc/\(pid)/comm", encoding: .utf8)) ?? "").hasPrefix("dbus-daemon")
        }
    }

    func stop() async {
        subscriberTask.cancel()
        _ = await subscriberTask.result
        consumerTask.cancel()
        await control.close()
        await simulator.stop()
        await broker.stop()
        try? FileManager.default.removeItem(atPath: directory)
    }
}

/// Counts the messages published on `gattway/+/state`: each is one advertisement decoded and published.
final class AdvertsStateCounter: Sendable {
    let client: MosquittoClient
    private let counts = Mutex<(messages: Int, devices: Set<String>)>((0, []))

    init(port: UInt16) {
        let options = MosquittoClient.Options(
            broker: MQTTBrokerURL(host: "127.0.0.1", port: Int(port)), clientID: "gattway-bench-adverts",
            inboundBuffer: .init(highWater: 50_000, lowWater: 10_000))
        var logger = Logger(label: "gattway.bench.adverts")
        logger.logLevel = .warning  // connection chatter would interleave with the figures
        client = MosquittoClient(options: options, logger: logger)
    }

    /// Connects and subscribes; then `consume()` must run in a task of its own.
    func start() async throws {
        try await client.waitUntilConnected(timeout: .seconds(10))
        try await client.subscribe("\(BenchWorld.base)/+/state", qos: .atMostOnce)
    }

    func consume() async {
        for await message in client.messages {
            let device = message.topic.split(separator: "/").dropFirst().first.map(String.init) ?? ""
            counts.withLock { counts in
                counts.messages += 1
                counts.devices.insert(device)
            }
        }
    }

    /// States received so far, and from how many devices.
    var received: (messages: Int, devices: Int) { counts.withLock { ($0.messages, $0.devices.count) } }
}
