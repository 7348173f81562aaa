import Logging
import MQTTCore
import Mosquitto
import ServiceLifecycle
import TestWorld
import Testing

/// What the broker says for a client that stops: its own goodbye when it stops gracefully, its Last Will when it
/// is cancelled before it could say goodbye (a shutdown that ran out of time).
@Suite(.serialized, .timeLimit(.minutes(5))) struct LastWillTests {
    private func options(_ broker: MosquittoBroker, _ name: String, _ version: MQTTProtocolVersion) throws
        -> MosquittoClient.Options
    {
        var options = try clientOptions(broker, name)
        options.protocolVersion = version
        options.will = MQTTMessage(topic: "will/\(name)", text: "offline (will)", qos: .atLeastOnce, retain: true)
        options.shutdownMessages = [
            MQTTMessage(topic: "will/\(name)", text: "offline (goodbye)", qos: .atLeastOnce, retain: true)
        ]
        return options
    }

    /// Runs the client until connected, then stops it by cancellation or graceful shutdown; returns what a fresh
    /// subscriber then finds retained on its will topic.
    private func stop(_ name: String, _ version: MQTTProtocolVersion, cancelling: Bool) async throws -> String {
        let broker = try await MosquittoBroker()
        let client = try MosquittoClient(options: try options(broker, name, version), logger: testLogger(name))
        if cancelling {
            let run = Task { try await client.run() }
            try await client.waitUntilConnected(timeout: .seconds(15))
            run.cancel()
            _ = try? await run.value
        } else {
            let group = ServiceGroup(services: [client], logger: Logger(label: "test"))
            try await withThrowingTaskGroup(of: Void.self) { tasks in
                tasks.addTask { try await group.run() }
                try await client.waitUntilConnected(timeout: .seconds(15))
                await group.triggerGracefulShutdown()
                try await tasks.waitForAll()
            }
        }
        let observer = try await MQTTObserver(port: broker.port, filters: ["will/#"])
        let retained = try await observer.waitForMessage(on: "will/\(name)", timeout: .seconds(15))
        await observer.stop()
        await broker.stop()
        return retained.payload
    }

    @Test(arguments: [MQTTProtocolVersion.v5, .v311])
    func aCancelledClientLeavesItsLastWill(version: MQTTProtocolVersion) async throws {
        #expect(try await stop("cancelled", version, cancelling: true) == "offline (will)")
    }

    @Test(arguments: [MQTTProtocolVersion.v5, .v311])
    func aGracefulStopSaysGoodbyeItself(version: MQTTProtocolVersion) async throws {
        #expect(try await stop("graceful", version, cancelling: false) == "offline (goodbye)")
    }
}
