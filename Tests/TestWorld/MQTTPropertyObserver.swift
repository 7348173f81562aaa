import Foundation

/// A real `mosquitto_sub` that records what `MQTTObserver` leaves out: each message's QoS and its MQTT 5
/// properties (Correlation Data and user properties), on a broker that may need credentials or TLS.
package final class MQTTPropertyObserver: Sendable {
    /// One received message as the subscriber saw it.
    package struct Message: Sendable, CustomStringConvertible {
        package let retained: Bool
        package let qos: Int
        package let topic: String
        /// The Correlation Data property as text, empty when absent.
        package let correlationData: String
        /// The user properties in the order they were sent.
        package let userProperties: [(key: String, value: String)]
        package let payload: String

        package func userProperty(_ key: String) -> String? { userProperties.first { $0.key == key }?.value }

        package var description: String {
            "\(topic) q\(qos) \(payload) correlation=\(correlationData) user=\(userProperties)\(retained ? " (retained)" : "")"
        }
    }

    /// How `mosquitto_sub` and `mosquitto_pub` reach the broker: host and port, and credentials or TLS options.
    package struct Connection: Sendable {
        package let arguments: [String]

        package init(port: UInt16, host: String = "127.0.0.1", extra: [String] = []) {
            arguments = ["-h", host, "-p", "\(port)"] + extra
        }
    }

    private let process: ChildProcess
    private let connection: Connection

    /// Subscribes to `filters` at `qos` and waits until the subscription is active: until a marker message the
    /// observer publishes itself comes back. Retained messages for the filters are delivered before the marker.
    package init(
        _ connection: Connection, filters: [String], qos: Int = 2, protocolVersion: String = "5"
    ) async throws {
        self.connection = connection
        // Fields are separated by a unit separator (0x1F): payloads and properties may contain tabs and spaces.
        var arguments =
            connection.arguments + [
                "-V", protocolVersion, "-F", "%r\u{1F}%q\u{1F}%t\u{1F}%D\u{1F}%P\u{1F}%p", "-q", "\(qos)",
            ]
        for filter in filters { arguments += ["-t", filter] }
        let marker = "gattway-test/ready/\(UUID().uuidString)"
        arguments += ["-t", marker]
        process = try ChildProcess("mosquitto_sub", arguments)
        let deadline = ContinuousClock.now + .seconds(20)
        while ContinuousClock.now < deadline {
            try? await publish(marker, "ready")
            if process.outputLines.contains(where: { $0.contains(marker) }) { return }
            if !process.isRunning { throw TestWorldError("mosquitto_sub exited: \(process.errorOutput)") }
            try await Task.sleep(for: .milliseconds(100))
        }
        throw TestWorldError("mosquitto_sub did not subscribe within 20 s: \(process.errorOutput)")
    }

    /// Every message received so far, oldest first.
    package var messages: [Message] {
        process.outputLines.compactMap { line in
            let parts = line.split(separator: "\u{1F}", maxSplits: 5, omittingEmptySubsequences: false)
            guard parts.count == 6 else { return nil }
            return Message(
                retained: parts[0] == "1", qos: Int(parts[1]) ?? -1, topic: String(parts[2]),
                correlationData: String(parts[3]), userProperties: Self.userProperties(parts[4]),
                payload: String(parts[5]))
        }
    }

    /// mosquitto_sub prints user properties as `key:value` pairs separated by spaces.
    private static func userProperties(_ text: Substring) -> [(key: String, value: String)] {
        text.split(separator: " ").map { pair in
            let halves = pair.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false)
            return (String(halves[0]), halves.count > 1 ? String(halves[1]) : "")
        }
    }

    package func messages(on topic: String) -> [Message] { messages.filter { $0.topic == topic } }

    /// Waits for a message on `topic` matching `predicate`, after the first `skipping` messages on that topic.
    @discardableResult
    package func waitForMessage(
        on topic: String, skipping: Int = 0, timeout: Duration = .seconds(30),
        where predicate: @Sendable (Message) -> Bool = { _ in true }
    ) async throws -> Message {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if let found = messages(on: topic).dropFirst(skipping).first(where: predicate) { return found }
            if !process.isRunning { throw TestWorldError("mosquitto_sub exited: \(process.errorOutput)") }
            try await Task.sleep(for: .milliseconds(25))
        }
        throw TestWorldError(
            "no matching message on \(topic) within \(timeout); last there: \(messages(on: topic).suffix(5))")
    }

    /// Publishes one message with `mosquitto_pub` over the same connection; `extra` adds flags such as `-r`
    /// or MQTT 5 properties (`-D publish correlation-data …`).
    package func publish(_ topic: String, _ payload: String, qos: Int = 1, extra: [String] = []) async throws {
        let child = try ChildProcess(
            "mosquitto_pub", connection.arguments + ["-t", topic, "-m", payload, "-q", "\(qos)"] + extra)
        guard let status = await child.waitForExit(timeout: .seconds(30)) else {
            throw TestWorldError("mosquitto_pub to \(topic) did not finish within 30 s: \(child.errorOutput)")
        }
        guard status == 0 else {
            throw TestWorldError("mosquitto_pub to \(topic) exited with status \(status): \(child.errorOutput)")
        }
    }

    package func stop() async { await process.stop(grace: .milliseconds(200)) }
}
