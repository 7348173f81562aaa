import Foundation
import TestWorld
import Testing

/// Hostile MQTT input against the built binary, the simulator and a real mosquitto: every case keeps the process
/// up, writes nothing to the device, and shows up as an error result and a counter on `bridge/metrics`.
@Suite(.serialized, .timeLimit(.minutes(4)))
struct HostileMQTTEndToEndTests {
    static let lockAddress = "D0:0D:10:C4:00:01"
    static let lockWrite = "0000fff1-0000-1000-8000-00805f9b34fb"

    /// The demo lock with a `uint8` characteristic on its control UUID (write-only: no `read`) and its readable
    /// state.
    static let lockConfig = """
        bluetooth:
          adapter: hci0
          request_timeout: 3
          connect_timeout: 5
          reconnect: { initial: 0.2, max: 1 }
        devices:
          - name: lock
            address: "\(lockAddress)"
            characteristics:
              - { name: level, service: "0000fff0-0000-1000-8000-00805f9b34fb", uuid: "\(lockWrite)", write: with_response, codec: uint8 }
              - { name: state, service: "0000fff0-0000-1000-8000-00805f9b34fb", uuid: "0000fff2-0000-1000-8000-00805f9b34fb", notify: true, read: true, codec: utf8 }
        """

    static func world(
        protocolVersion: String = "5", config: String = lockConfig, observed: [String] = ["gattway/#"]
    ) async throws -> CentralWorld {
        try await CentralWorld(
            scenario: "demo.yaml", config: config,
            extraMQTT: "  metrics_interval: 1\n  protocol: \"\(protocolVersion)\"", observed: observed)
    }

    /// The value of counter `name` in a `bridge/metrics` payload (0 when absent).
    static func counter(_ payload: String, _ name: String) -> Double {
        let json = try? JSONSerialization.jsonObject(with: Data(payload.utf8)) as? [String: Any]
        let counters = json?["counters"] as? [String: Any]
        return (counters?[name] as? NSNumber)?.doubleValue ?? 0
    }

    /// Waits for a metrics snapshot in which counter `name` has reached `minimum`.
    @discardableResult
    static func waitForCounter(_ world: CentralWorld, _ name: String, atLeast minimum: Double) async throws
        -> Double
    {
        let snapshot = try await world.observer.waitForMessage(on: "gattway/bridge/metrics") {
            counter($0, name) >= minimum
        }
        return counter(snapshot.payload, name)
    }

    static func expectNothingWritten(_ world: CentralWorld, sourceLocation: SourceLocation = #_sourceLocation)
        async throws
    {
        let writes = try await world.control.writes(lockAddress, uuid: lockWrite)
        #expect(writes.isEmpty, "written to the lock: \(writes)", sourceLocation: sourceLocation)
        #expect(world.gattway.isRunning, "gattway is not running", sourceLocation: sourceLocation)
    }

    /// Peak resident memory (VmHWM) of a process, in bytes.
    static func peakResidentBytes(of pid: Int32) throws -> Int {
        let status = try String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)
        guard let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmHWM:") }),
            let kilobytes = Int(line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? "")
        else { throw TestWorldError("no VmHWM in /proc/\(pid)/status") }
        return kilobytes * 1024
    }

    /// Publishes the contents of a file with `mosquitto_pub -f` (payloads too large for a command line).
    static func publishFile(_ world: CentralWorld, topic: String, path: String, version: String) async throws {
        let child = try ChildProcess(
            "mosquitto_pub",
            [
                "-h", "127.0.0.1", "-p", "\(world.broker.port)", "-V", version == "5" ? "5" : "311", "-q", "1",
                "-t", topic, "-f", path,
            ])
        guard let status = await child.waitForExit(timeout: .seconds(60)), status == 0 else {
            throw TestWorldError("mosquitto_pub -f to \(topic) failed: \(child.errorOutput)")
        }
    }

    // MARK: - Numbers

    @Test func hugeExponentsAndOutOfRangeNumbersAreRefusedNamingTheRange() async throws {
        let world = try await Self.world()
        try await world.run { world in
            try await world.observer.waitForMessage(on: "gattway/lock/availability") { $0 == "online" }
            let hostile = [
                "1e-9223372036854775808", #"{"value":1e-9223372036854775808}"#, "1e9223372036854775807",
                "256", "-1", #"{"value":"300","transaction":7}"#,
            ]
            for payload in hostile { try await world.publish("gattway/lock/level/set", payload) }
            let results = try await Self.waitForResults(
                world, on: "gattway/lock/level/set/result", count: hostile.count)
            for result in results {
                #expect(result.contains(#""ok":false"#) && result.contains("0…255"), "\(result)")
            }
            #expect(results.last?.contains(#""transaction":7"#) == true)
            try await Self.waitForCounter(
                world, "gattway.mqtt.commands_refused{reason=invalid_payload}", atLeast: Double(hostile.count))
            try await Self.expectNothingWritten(world)
        }
    }

    static func waitForResults(_ world: CentralWorld, on topic: String, count: Int) async throws -> [String] {
        try await world.observer.waitForMessage(on: topic, skipping: count - 1)
        return world.observer.messages(on: topic).map(\.payload)
    }

    // MARK: - Retained commands

    @Test(arguments: ["5", "3.1.1"])
    func aRetainedCommandIsNeverReplayedAfterARestart(protocolVersion: String) async throws {
        // The demo lock's control characteristic accepts `lock` and `unlock`, as the real one would.
        let world = try await Self.world(protocolVersion: protocolVersion, config: Configs.strapAndLock)
        try await world.run { world in
            try await world.observer.waitForMessage(on: "gattway/lock/availability") { $0 == "online" }
            // Delivered live (retain flag cleared for current subscribers), so it runs once.
            try await MQTTObserver.publish(
                port: world.broker.port, topic: "gattway/lock/control/set", payload: "unlock", retain: true)
            try await world.observer.waitForMessage(on: "gattway/lock/control/set/result") { $0 == #"{"ok":true}"# }
            world.gattway.send(SIGTERM)
            #expect(await world.gattway.waitForExit(timeout: .seconds(20)) == 0)
            let onlineBefore = world.observer.messages(on: "gattway/lock/availability").count
            let second = try world.restartGattway()
            do {
                try await world.observer.waitForMessage(on: "gattway/lock/availability", skipping: onlineBefore) {
                    $0 == "online"
                }
                if protocolVersion == "3.1.1" {
                    // MQTT 3.1.1 cannot ask the broker to hold it back: Gattway sees the retain flag and refuses.
                    try await world.observer.waitForMessage(on: "gattway/lock/control/set/result") {
                        $0.contains("gattway.Error.RetainedCommand")
                    }
                    try await Self.waitForCounter(world, "gattway.mqtt.commands_refused{reason=retained}", atLeast: 1)
                }
                // A live command after the restart is the marker that everything before it was handled.
                try await world.publish("gattway/lock/control/set", "lock")
                try await world.observer.waitForMessage(on: "gattway/lock/control/set/result", skipping: 1) {
                    $0 == #"{"ok":true}"#
                }
                let writes = try await world.control.writes(Self.lockAddress, uuid: Self.lockWrite)
                #expect(writes == [Array("unlock".utf8), Array("lock".utf8)])
                #expect(second.isRunning)
                #expect(second.errorOutput.components(separatedBy: "mqtt.command.refused").count <= 2)
            } catch {
                Issue.record("second gattway log:\n\(second.errorOutput.suffix(4000))")
                await second.stop()
                throw error
            }
            await second.stop()
        }
    }

    // MARK: - Response Topic

    @Test func aResponseTopicGattwaySubscribesToIsRefused() async throws {
        let world = try await Self.world()
        try await world.run { world in
            try await world.observer.waitForMessage(on: "gattway/lock/availability") { $0 == "online" }
            // Aimed at the lock's own /set: Gattway would receive its reply and write it to the lock.
            try await world.publish(
                "gattway/bridge/request/devices", #"{"transaction":"unlock"}"#,
                extraArguments: ["-V", "5", "-D", "publish", "response-topic", "gattway/lock/level/set"])
            try await world.observer.waitForMessage(on: "gattway/bridge/response/devices") {
                $0.contains("gattway.Error.ForbiddenResponseTopic")
            }
            // A /set whose Response Topic points at another command topic is not executed either.
            try await world.publish(
                "gattway/lock/level/set", "1",
                extraArguments: ["-V", "5", "-D", "publish", "response-topic", "gattway/bridge/request/remove"])
            try await world.observer.waitForMessage(on: "gattway/lock/level/set/result") {
                $0.contains("gattway.Error.ForbiddenResponseTopic")
            }
            try await Self.waitForCounter(world, "gattway.mqtt.commands_refused{reason=response_topic}", atLeast: 2)
            #expect(world.observer.messages(on: "gattway/lock/level/set").count == 1)
            try await Self.expectNothingWritten(world)
        }
    }

    // MARK: - Sizes

    @Test(arguments: ["5", "3.1.1"])
    func thirtyMegabytesOnSetKeepMemoryBoundedAndAreRefusedUnparsed(protocolVersion: String) async throws {
        // The observer leaves the command topics alone: it would hold every 30 MB message in this process.
        let world = try await Self.world(
            protocolVersion: protocolVersion,
            observed: ["gattway/+/availability", "gattway/+/+/set/result", "gattway/bridge/metrics"])
        try await world.run { world in
            try await world.observer.waitForMessage(on: "gattway/lock/availability") { $0 == "online" }
            let path = world.directory + "/huge.json"
            var huge = Data("{\"a\":[".utf8)
            huge.append(Data(repeating: UInt8(ascii: "0"), count: 1))
            huge.append(Data(String(repeating: ",0", count: 15_000_000).utf8))
            huge.append(Data("]}".utf8))
            try huge.write(to: URL(fileURLWithPath: path))
            for _ in 0..<2 {
                try await Self.publishFile(world, topic: "gattway/lock/level/set", path: path, version: protocolVersion)
            }
            // Just over the command limit: MQTT 5's Maximum Packet Size lets it through, so Gattway refuses it.
            let over = world.directory + "/over.txt"
            try Data(repeating: UInt8(ascii: "1"), count: 3000).write(to: URL(fileURLWithPath: over))
            try await Self.publishFile(world, topic: "gattway/lock/level/set", path: over, version: protocolVersion)
            try await world.observer.waitForMessage(on: "gattway/lock/level/set/result") {
                $0.contains("gattway.Error.PayloadTooLarge") && $0.contains("3000 bytes")
            }
            // With 3.1.1 the broker delivers the 30 MB messages too; with MQTT 5 it drops them for Gattway.
            // They were published first, so they would have been counted before the small one.
            let expected: Double = protocolVersion == "5" ? 1 : 3
            let counted = try await Self.waitForCounter(
                world, "gattway.mqtt.commands_refused{reason=oversize}", atLeast: expected)
            #expect(counted == expected)
            let peak = try Self.peakResidentBytes(of: world.gattway.pid)
            // libmosquitto reads a whole packet, then copies its payload into the message it hands over: two 30 MB
            // buffers at once, on top of a ~35 MB process. Unbounded handling would add a copy per message and layer.
            #expect(peak < 120_000_000, "peak resident \(peak / 1_000_000) MB")
            print(
                "gattway peak resident (VmHWM) with MQTT \(protocolVersion) after 2 × 30 MB on /set: \(peak / 1_000_000) MB"
            )
            try await Self.expectNothingWritten(world)
        }
    }

    // MARK: - Logs

    @Test func logsNeverCarryPayloadTextAndRepeatedBadInputIsRateLimited() async throws {
        let world = try await Self.world()
        try await world.run { world in
            try await world.observer.waitForMessage(on: "gattway/lock/availability") { $0 == "online" }
            let forged = "x\n2026-01-01T00:00:00+0000 critical gattway : FORGED-LINE"
            for _ in 0..<12 { try await world.publish("gattway/lock/level/set", forged) }
            try await world.observer.waitForMessage(on: "gattway/lock/level/set/result", skipping: 11)
            try await Self.waitForCounter(world, "gattway.mqtt.commands_refused{reason=invalid_payload}", atLeast: 12)
            let log = world.gattwayLog
            #expect(!log.contains("\n2026-01-01T00:00:00+0000 critical gattway : FORGED"), "\(log.suffix(2000))")
            let reports = log.components(separatedBy: "mqtt.command.invalid").count - 1
            #expect(reports >= 1 && reports <= 3, "\(reports) reports of the same bad input")
            // The error result quotes only an escaped prefix.
            let result = try #require(world.observer.messages(on: "gattway/lock/level/set/result").last)
            #expect(!result.payload.contains("FORGED-LINE"), "\(result.payload)")
            try await Self.expectNothingWritten(world)
        }
    }

    // MARK: - /get

    @Test func getIsOnlyServedWhereReadIsConfiguredAndFailuresHaveAResult() async throws {
        let world = try await Self.world()
        try await world.run { world in
            try await world.observer.waitForMessage(on: "gattway/lock/availability") { $0 == "online" }
            // `level` has no `read: true`: Gattway does not even subscribe to its /get.
            try await world.publish("gattway/lock/level/get", "")
            // A /get that fails says so on get/result, with its transaction, as a /set does on set/result.
            try await world.publish("gattway/lock/state/get", #"{"value":null,"transaction":"t1"}"#)
            try await world.observer.waitForMessage(on: "gattway/lock/state/get/result") {
                $0.contains("gattway.Error.InvalidPayload")
            }
            // A readable characteristic answers on its get/result when the read succeeds too.
            try await world.publish("gattway/lock/state/get", "")
            try await world.observer.waitForMessage(on: "gattway/lock/state/get/result") { $0 == #"{"ok":true}"# }
            #expect(world.observer.messages(on: "gattway/lock/level/get/result").isEmpty)
            try await Self.expectNothingWritten(world)
        }
    }
}
