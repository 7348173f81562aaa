import DBus
import Foundation
import Logging
import MQTTCore
import Mosquitto
import Synchronization
import TestWorld

/// The world one `adverts` workload runs in, for each receiver in turn: mosquitto on a free port, the BlueZ
/// simulator (with the sensor crowd, or empty for a single fast sensor added through its control interface), and a
/// subscriber counting the decoded states published on `gattway/+/state`.
final class AdvertsStage: Sendable {
    let directory: String
    let port: UInt16
    /// Where the receivers publish: the broker's unix socket, or its TCP port.
    let brokerURL: String
    /// The C receiver's HOST PORT for the same broker (a unix socket's path and 0).
    let brokerArguments: [String]
    let busAddress: String
    let broker: MosquittoBroker
    let simulator: BlueZSimulatorProcess
    let control: DBusConnection
    let states: AdvertsStateCounter
    private let subscriberTask: Task<Void, any Error>
    private let consumerTask: Task<Void, Never>

    init(simulatorPath: String, scenario: String?, unixSocket: Bool) async throws {
        directory = try makeTemporaryDirectory("gattway-bench-adverts")
        broker = try await MosquittoBroker(unixSocket: unixSocket)
        port = broker.port
        if let socket = broker.socketPath {
            brokerURL = "unix://\(socket)"
            brokerArguments = [socket, "0"]
        } else {
            brokerURL = "mqtt://127.0.0.1:\(port)"
            brokerArguments = ["127.0.0.1", "\(port)"]
        }
        simulator = try await BlueZSimulatorProcess(
            executable: simulatorPath, scenarioPath: scenario, timeout: .seconds(180))
        busAddress = simulator.busAddress
        control = try await DBusConnection.connect(
            to: .address(busAddress), name: "bench-control", logger: Logger(label: "gattway.bench.control"))
        states = try AdvertsStateCounter(port: port)
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

    init(port: UInt16) throws {
        let options = MosquittoClient.Options(
            broker: MQTTBrokerURL(host: "127.0.0.1", port: Int(port)), clientID: "gattway-bench-adverts",
            inboundBuffer: .init(highWater: 50_000, lowWater: 10_000))
        var logger = Logger(label: "gattway.bench.adverts")
        logger.logLevel = .warning  // connection chatter would interleave with the figures
        client = try MosquittoClient(options: options, logger: logger)
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
