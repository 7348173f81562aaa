import Foundation

/// A real `mosquitto_sub` watching topics, as a user's MQTT client would, recording every message it prints.
package final class MQTTObserver: Sendable {
    /// One received message: retained flag, topic and payload text.
    package struct Message: Sendable, CustomStringConvertible {
        package let retained: Bool
        package let topic: String
        package let payload: String
        package var description: String { "\(topic) \(payload)\(retained ? " (retained)" : "")" }
    }

    private let process: ChildProcess

    /// Subscribes to `filters` on the broker at 127.0.0.1:`port` and waits until the subscription is active.
    package init(port: UInt16, filters: [String], protocolVersion: String = "5") async throws {
        var arguments = ["-h", "127.0.0.1", "-p", "\(port)", "-V", protocolVersion, "-F", "%r\t%t\t%p", "-q", "1"]
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
        process.outputLines.compactMap { line in
            let parts = line.split(separator: "\t", maxSplits: 2, omittingEmptySubsequences: false)
            guard parts.count == 3 else { return nil }
            return Message(retained: parts[0] == "1", topic: String(parts[1]), payload: String(parts[2]))
        }
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
        guard let status = await child.waitForExit(timeout: .seconds(10)), status == 0 else {
            throw TestWorldError("mosquitto_pub to \(topic) failed: \(child.errorOutput)")
        }
    }
}
