import Foundation

/// A real `mosquitto_sub` watching topics, as a user's MQTT client would, recording every message it prints.
package final class MQTTObserver: Sendable {
    /// One received message: retained flag, topic and payload text, and the MQTT 5 properties when the observer
    /// captures them.
    package struct Message: Sendable, CustomStringConvertible {
        package let retained: Bool
        package let topic: String
        package let payload: String
        package var correlationData: String? = nil
        package var responseTopic: String? = nil
        package var userProperties: [String: String] = [:]
        package var description: String { "\(topic) \(payload)\(retained ? " (retained)" : "")" }
    }

    private let process: ChildProcess
    private let capturesProperties: Bool

    /// Subscribes to `filters` on the broker at 127.0.0.1:`port` and waits until the subscription is active.
    /// `capturingProperties` has mosquitto_sub print each message as JSON, the only form in which it shows
    /// correlation data, so that the messages carry their MQTT 5 properties.
    package init(
        port: UInt16, filters: [String], protocolVersion: String = "5", capturingProperties: Bool = false
    ) async throws {
        capturesProperties = capturingProperties
        let format = capturingProperties ? "%j" : "%r\t%t\t%p"
        var arguments = ["-h", "127.0.0.1", "-p", "\(port)", "-V", protocolVersion, "-F", format, "-q", "1"]
        for filter in filters { arguments += ["-t", filter] }
        // A marker topic tells us when the subscription is in place.
        let marker = "gattway-test/ready/\(UUID().uuidString)"
        arguments += ["-t", marker]
        process = try ChildProcess("mosquitto_sub", arguments)
        let deadline = ContinuousClock.now + .seconds(20)
        while ContinuousClock.now < deadline {
            try? await MQTTObserver.publish(port: port, topic: marker, payload: "ready")
            if process.outputLines.contains(where: { $0.contains(marker) }) { return }
            if !process.isRunning {
                throw TestWorldError("mosquitto_sub exited: \(process.errorOutput)")
            }
            try await Task.sleep(for: .milliseconds(100))
        }
        throw TestWorldError("mosquitto_sub did not subscribe within 20 s: \(process.errorOutput)")
    }

    /// Every message received so far, oldest first.
    package var messages: [Message] {
        if capturesProperties { return process.outputLines.compactMap(Self.messageFromJSON) }
        return process.outputLines.compactMap { line in
            let parts = line.split(separator: "\t", maxSplits: 2, omittingEmptySubsequences: false)
            guard parts.count == 3 else { return nil }
            return Message(retained: parts[0] == "1", topic: String(parts[1]), payload: String(parts[2]))
        }
    }

    /// One line of mosquitto_sub's `%j` output: `{"topic":…,"retain":0,"properties":{…},"payload":"…"}`.
    private static func messageFromJSON(_ line: String) -> Message? {
        guard let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
            let topic = object["topic"] as? String
        else { return nil }
        let properties = object["properties"] as? [String: Any] ?? [:]
        return Message(
            retained: (object["retain"] as? Int ?? 0) != 0, topic: topic, payload: object["payload"] as? String ?? "",
            correlationData: properties["correlation-data"] as? String,
            responseTopic: properties["response-topic"] as? String,
            userProperties: properties["user-properties"] as? [String: String] ?? [:])
    }

    package func messages(on topic: String) -> [Message] { messages.filter { $0.topic == topic } }

    /// Waits for a message on `topic` whose payload satisfies `predicate`, received after the first `skipping`
    /// messages on that topic.
    @discardableResult
    package func waitForMessage(
        on topic: String, skipping: Int = 0, timeout: Duration = .seconds(30),
        where predicate: @Sendable (String) -> Bool = { _ in true }
    ) async throws -> Message {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if let found = messages(on: topic).dropFirst(skipping).first(where: { predicate($0.payload) }) {
                return found
            }
            try await Task.sleep(for: .milliseconds(25))
        }
        let seen = messages(on: topic).suffix(5).map(\.payload)
        throw TestWorldError("no matching message on \(topic) within \(timeout); last payloads there: \(seen)")
    }

    /// mosquitto_sub is a client with nothing to flush: a short grace before SIGKILL keeps tests quick.
    package func stop() async { await process.stop(grace: .milliseconds(200)) }

    /// Publishes one message with a real `mosquitto_pub`.
    package static func publish(
        port: UInt16, topic: String, payload: String, retain: Bool = false, extraArguments: [String] = []
    ) async throws {
        var arguments = ["-h", "127.0.0.1", "-p", "\(port)", "-t", topic, "-m", payload, "-q", "1"] + extraArguments
        if retain { arguments.append("-r") }
        let child = try ChildProcess("mosquitto_pub", arguments)
        guard let status = await child.waitForExit(timeout: .seconds(30)) else {
            throw TestWorldError("mosquitto_pub to \(topic) did not finish within 30 s: \(child.errorOutput)")
        }
        guard status == 0 else {
            throw TestWorldError("mosquitto_pub to \(topic) exited with status \(status): \(child.errorOutput)")
        }
    }
}
