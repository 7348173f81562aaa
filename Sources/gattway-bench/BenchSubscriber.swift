import Logging
import MQTTCore
import Mosquitto
import Synchronization

/// The benchmark's own MQTT client: subscribes to every value, availability and `/set/result` topic of the
/// benchmark devices, checks order and loss, and measures latency on receipt.
final class BenchSubscriber: Sendable {
    let client: MosquittoClient
    private let base: String
    private let state = Mutex(State())
    private let results: AsyncStream<String>
    private let resultContinuation: AsyncStream<String>.Continuation

    private struct State {
        var tally: BenchPhaseTally?
        var online = Set<Int>()
        var unexpected = 0
    }

    init(port: UInt16, base: String, qos: MQTTQoS) throws {
        self.base = base
        let options = MosquittoClient.Options(
            broker: MQTTBrokerURL(host: "127.0.0.1", port: Int(port)), clientID: "gattway-bench-subscriber",
            // A deep inbound buffer, so a burst is taken off the socket rather than left in the broker.
            inboundBuffer: .init(highWater: 50_000, lowWater: 10_000))
        var logger = Logger(label: "gattway.bench.subscriber")
        logger.logLevel = .warning  // connection chatter would interleave with the figures
        client = try MosquittoClient(options: options, logger: logger)
        // At most a few results wait: writes are sequential, one outstanding at a time.
        (results, resultContinuation) = AsyncStream.makeStream(of: String.self, bufferingPolicy: .bufferingNewest(16))
        subscriptionQoS = qos
    }

    private let subscriptionQoS: MQTTQoS

    /// Connects and subscribes; then `consume()` must run in a task of its own.
    func start() async throws {
        try await client.waitUntilConnected(timeout: .seconds(10))
        try await client.subscribe("\(base)/+/data", qos: subscriptionQoS)
        try await client.subscribe("\(base)/+/availability", qos: .atLeastOnce)
        try await client.subscribe("\(base)/+/cmd/set/result", qos: .atLeastOnce)
    }

    /// Reads every received message until the client stops.
    func consume() async {
        let dataSuffix = "/data"
        for await message in client.messages {
            let now = BenchProcStats.monotonicNanoseconds()
            let topic = message.topic
            if topic.hasSuffix(dataSuffix) {
                let device = deviceIndex(topic)
                state.withLock { state in
                    if state.tally != nil {
                        state.tally!.record(device: device, payload: message.payload, now: now)
                    } else {
                        state.unexpected += 1
                    }
                }
            } else if topic.hasSuffix("/availability") {
                let device = deviceIndex(topic)
                let online = message.payloadText == "online"
                state.withLock { state in
                    if online { state.online.insert(device) } else { state.online.remove(device) }
                }
            } else if topic.hasSuffix("/set/result") {
                resultContinuation.yield(message.payloadText)
            }
        }
        resultContinuation.finish()
    }

    /// `<base>/fh<N>/...` → N, or -1.
    private func deviceIndex(_ topic: String) -> Int {
        let parts = topic.split(separator: "/", maxSplits: 2)
        guard parts.count >= 2, parts[1].hasPrefix("fh"), let index = Int(parts[1].dropFirst(2)) else { return -1 }
        return index
    }

    var onlineDevices: Set<Int> { state.withLock { $0.online } }

    /// Starts counting a new phase of `devices` devices.
    func beginPhase(devices: Int, expected: Int) {
        state.withLock { $0.tally = BenchPhaseTally(devices: devices, expected: expected) }
    }

    var receivedInPhase: Int { state.withLock { $0.tally?.received ?? 0 } }

    /// Ends the phase and returns what it saw.
    func endPhase() -> BenchPhaseTally? {
        state.withLock { state in
            defer { state.tally = nil }
            return state.tally
        }
    }

    /// Values that arrived between phases (late stragglers of an earlier phase would show up here).
    var unexpectedValues: Int { state.withLock { $0.unexpected } }

    /// The next `/set/result` payload, or an error after `timeout`.
    func nextResult(timeout: Duration) async throws -> String {
        let stream = results
        return try await withThrowingTaskGroup(of: String?.self) { group in
            group.addTask {
                for await result in stream { return result }
                return nil
            }
            group.addTask {
                try await Task.sleep(for: timeout)
                throw BenchError("no /set/result within \(timeout)")
            }
            defer { group.cancelAll() }
            guard let first = try await group.next(), let result = first else {
                throw BenchError("the subscriber stopped before a /set/result arrived")
            }
            return result
        }
    }
}
