import Glibc
import MQTTCore
import Mosquitto
import TestWorld
import Testing

@Suite(.serialized, .timeLimit(.minutes(5))) struct ConnectionTests {
    @Test func recoversAndResubscribesAfterTheBrokerRestarts() async throws {
        let broker = try await MosquittoBroker()
        let client = try MosquittoClient(options: try clientOptions(broker, "recover"), logger: testLogger("recover"))
        let received = try await withRunningClients([client]) {
            try await client.subscribe("recover/#", qos: .atLeastOnce)
            var events = client.connectionEvents.makeAsyncIterator()
            #expect(await events.next() == .connected)
            await broker.stop()
            guard case .disconnected = await events.next() else {
                Issue.record("no disconnect event")
                return ""
            }
            try await broker.start()
            while let event = await events.next(), event != .connected {}
            // SUBACK for the re-subscription is not awaited by anyone; publish with retain so ordering cannot matter.
            try await MosquittoBroker.runTool(
                "mosquitto_pub",
                [
                    "-h", "127.0.0.1", "-p", "\(broker.port)", "-q", "1", "-r", "-t", "recover/after", "-m", "back",
                ])
            return try await nextMessage(of: client).payloadText
        }
        #expect(received == "back")
        #expect(await client.currentStatistics.connects == 2)
        await broker.stop()
    }

    /// The loop's handlers hold the client while it runs; once `run()` returned, its last owner releases it, and
    /// with it the loop's thread.
    @Test func aClientThatStoppedIsReleasedWithItsLoop() async throws {
        let broker = try await MosquittoBroker()
        // "rel-PORT": the loop's thread, "mqtt.rel-PORT", fits the 15 bytes a thread name shows.
        let options = try clientOptions(broker, "rel")
        weak var released: MosquittoClient?
        do {
            let client = try MosquittoClient(options: options, logger: testLogger("release"))
            released = client
            try await withRunningClients([client]) {
                try await client.subscribe("release/#", qos: .atLeastOnce)
                try await client.publish(MQTTMessage(topic: "release/x", text: "x", qos: .atLeastOnce))
                _ = try await nextMessage(of: client)
            }
        }
        #expect(
            try await ProcessThreads.end("mqtt.\(options.clientID)", within: .seconds(5)),
            "its loop's thread still runs")
        #expect(released == nil, "the stopped client was not released")
        await broker.stop()
    }

    @Test func connectsOverTLSWithUsernameAndPassword() async throws {
        let broker = try await MosquittoBroker(users: ["gattway": "s3cret"], tls: true)
        let certificates = try #require(broker.certificates)
        var options = try clientOptions(broker, "tls")
        options.username = "gattway"
        options.password = "s3cret"
        options.tls = .init(caFile: certificates.caFile)
        let client = try MosquittoClient(options: options, logger: testLogger("tls"))
        let echoed = try await withRunningClients([client]) {
            try await client.subscribe("secure/echo", qos: .atLeastOnce)
            try await client.publish(MQTTMessage(topic: "secure/echo", text: "over tls", qos: .atLeastOnce))
            return try await nextMessage(of: client).payloadText
        }
        #expect(echoed == "over tls")
        await broker.stop()
    }

    @Test func wrongPasswordReportsTheCONNACKReason() async throws {
        let broker = try await MosquittoBroker(users: ["gattway": "s3cret"])
        var options = try clientOptions(broker, "badpw")
        options.username = "gattway"
        options.password = "wrong"
        let client = try MosquittoClient(options: options, logger: testLogger("badpw"))
        let expected = MQTTError.connectionRefused(MQTTConnectReason(code: 135, protocolVersion: .v5))
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { await #expect(throws: expected) { try await client.run() } }
            await #expect(throws: expected) { try await client.waitUntilConnected(timeout: .seconds(15)) }
            try await group.waitForAll()
        }
        #expect(expected.description == "connection refused by broker: 135 Not authorized")
        await broker.stop()
    }

    @Test func closedPortGivesTheUnreachableError() async throws {
        let port = try freeLoopbackPort()
        let options = MosquittoClient.Options(
            broker: try MQTTBrokerURL(parsing: "mqtt://127.0.0.1:\(port)"), clientID: "closed")
        let error = try await connectError(options)
        guard case .unreachable(let host, let errorPort, let errno, let reason) = error else {
            Issue.record("unexpected error \(String(describing: error))")
            return
        }
        #expect(host == "127.0.0.1" && errorPort == Int(port))
        #expect(errno == ECONNREFUSED)
        #expect(reason == "Connection refused")
        #expect(error?.description.hasPrefix("broker 127.0.0.1:\(port) is unreachable: Connection refused") == true)
    }

    /// The error a client with `options` meets while it waits for its first connection (nil when it connected).
    private func connectError(_ options: MosquittoClient.Options) async throws -> MQTTError? {
        let client = try MosquittoClient(options: options, logger: testLogger(options.clientID))
        return try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await client.run() }
            defer { group.cancelAll() }
            do {
                try await client.waitUntilConnected(timeout: .seconds(2))
                return nil
            } catch let error as MQTTError {
                return error
            }
        }
    }

    /// A broker on the same machine reached through its unix socket: QoS 0 through the client's own writes, QoS 1
    /// through libmosquitto's, both back through the subscription, in order.
    @Test func connectsThroughAUnixSocket() async throws {
        let broker = try await MosquittoBroker(unixSocket: true)
        let socket = try #require(broker.socketPath)
        let options = MosquittoClient.Options(
            broker: try MQTTBrokerURL(parsing: "unix://\(socket)"), clientID: "unix-\(broker.port)")
        #expect(options.broker.usesUnixSocket && options.broker.description == "unix://\(socket)")
        let client = try MosquittoClient(options: options, logger: testLogger("unix"))
        let topics = try await withRunningClients([client]) {
            try await client.subscribe("unix/#", qos: .atLeastOnce)
            try await client.publish(MQTTMessage(topic: "unix/zero", text: "0", qos: .atMostOnce))
            try await client.publish(MQTTMessage(topic: "unix/one", text: "1", qos: .atLeastOnce))
            // One iterator for both: an iterator takes what arrived together as a batch (here both, often).
            return try await withDeadline(.seconds(15), "two messages") {
                var messages = client.messages.makeAsyncIterator()
                var topics: [String] = []
                while topics.count < 2, let message = await messages.next() { topics.append(message.topic) }
                return topics
            }
        }
        #expect(topics == ["unix/zero", "unix/one"])
        let statistics = await client.currentStatistics
        #expect(statistics.directPublishes == 1 && statistics.messagesPublished == 2)
        await broker.stop()
    }

    @Test func aMissingUnixSocketGivesTheUnreachableError() async throws {
        let path = try makeTemporaryDirectory("gattway-no-broker") + "/mosquitto.sock"
        let error = try await connectError(MosquittoClient.Options(broker: .unixSocket(path), clientID: "no-socket"))
        guard case .unreachable(let host, 0, let errno, _) = error else {
            Issue.record("unexpected error \(String(describing: error))")
            return
        }
        #expect(host == path && errno == ENOENT)
        #expect(error?.description.hasPrefix("broker on unix socket \(path) is unreachable: ") == true)
    }

    @Test func unreadableCAFileIsATLSSetupError() async throws {
        var options = MosquittoClient.Options(
            broker: try MQTTBrokerURL(parsing: "mqtts://localhost:1"), clientID: "badca")
        options.tls = .init(caFile: "/nonexistent/ca.crt")
        let client = try MosquittoClient(options: options, logger: testLogger("badca"))
        await #expect {
            try await client.run()
        } throws: { error in
            guard case MQTTError.tlsSetupFailed(let reason) = error else { return false }
            return reason.contains("/nonexistent/ca.crt")
        }
    }
}
