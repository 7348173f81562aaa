import Logging
import MQTTCore
import Mosquitto
import TestWorld

/// Options for a client of `broker`, with a unique client id.
func clientOptions(_ broker: MosquittoBroker, _ name: String) throws -> MosquittoClient.Options {
    MosquittoClient.Options(
        broker: try MQTTBrokerURL(parsing: broker.url), clientID: "\(name)-\(broker.port)",
        reconnectBackoff: JitteredBackoff(initial: .milliseconds(50), maximum: .milliseconds(500))
    )
}

func testLogger(_ label: String) -> Logger {
    var logger = Logger(label: "gattway.test.\(label)")
    logger.logLevel = .warning
    return logger
}

/// Runs each client's `run()` in a child task, waits until all are connected, runs `body`, then cancels them.
func withRunningClients<Result: Sendable>(
    _ clients: [MosquittoClient], connectTimeout: Duration = .seconds(15),
    _ body: @Sendable () async throws -> Result
) async throws -> Result {
    try await withThrowingTaskGroup(of: Void.self) { group in
        for client in clients { group.addTask { try await client.run() } }
        defer { group.cancelAll() }
        for client in clients { try await client.waitUntilConnected(timeout: connectTimeout) }
        return try await body()
    }
}

/// A payload carrying a sequence number, so receivers can check order and completeness.
func sequencePayload(_ index: Int) -> [UInt8] {
    withUnsafeBytes(of: UInt32(index).bigEndian) { Array($0) }
}

func sequenceNumber(_ payload: [UInt8]) -> Int {
    payload.prefix(4).reduce(0) { $0 << 8 | Int($1) }
}

/// The next message `client` receives, failing the test when none arrives within `timeout`.
///
/// Each call iterates `messages` afresh, and an iterator takes the client's buffered messages in batches: use it
/// only where at most one message can be waiting, and one iterator for a series.
func nextMessage(of client: MosquittoClient, timeout: Duration = .seconds(15)) async throws -> MQTTMessage {
    try await withDeadline(timeout, "a message") {
        var iterator = client.messages.makeAsyncIterator()
        guard let message = await iterator.next() else { throw TestWorldError("the message stream ended") }
        return message
    }
}
