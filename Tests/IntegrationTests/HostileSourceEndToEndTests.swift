import DBus
import Foundation
import TestWorld
import Testing

/// Hostile input on the local peripheral's MQTT side: source values that cannot be served whole, numbers that
/// must not trap, and a Response Topic aimed at a source topic. The characteristic keeps its value, the process
/// stays up, and each refusal is counted on `bridge/metrics`.
@Suite(.serialized, .timeLimit(.minutes(3)))
struct HostileSourceEndToEndTests {
    static let level = "6e400004-b5a3-f393-e0a9-e50e24dcca9e"

    /// A readable `uint8` characteristic fed from `test/level`, beside the world's `tx` (utf8, at most 512 bytes).
    static let levelCharacteristic = """
                - uuid: "\(level)"
                  name: level
                  flags: [read]
                  source_topic: test/level
                  codec: uint8
        """

    static func world() async throws -> PeripheralWorld {
        try await PeripheralWorld(extraMQTT: "  metrics_interval: 1", extraCharacteristics: levelCharacteristic)
    }

    /// The value a central reads now, retried until the characteristic has one.
    static func read(_ world: PeripheralWorld, _ uuid: String) async throws -> [UInt8] {
        let deadline = ContinuousClock.now + .seconds(20)
        while ContinuousClock.now < deadline {
            let reply = try await world.centralCall(
                "ReadValue", [.string(PeripheralWorld.central), .string(uuid), .uint16(0)])
            if let bytes = reply.last?.bytes, !bytes.isEmpty { return bytes }
            try await Task.sleep(for: .milliseconds(100))
        }
        throw TestWorldError("no value to read on \(uuid) within 20 s")
    }

    static func waitForCounter(_ world: PeripheralWorld, _ name: String, atLeast minimum: Double) async throws {
        try await world.observer.waitForMessage(on: "gattway/bridge/metrics") {
            HostileMQTTEndToEndTests.counter($0, name) >= minimum
        }
    }

    @Test func sourceValuesTooLongOrTooLargeOrOutOfRangeAreRefusedWhole() async throws {
        let world = try await Self.world()
        try await world.run { world in
            try await world.waitForApplication()
            try await world.publish("test/tx", "good", retain: true)
            try await world.publish("test/level", "42", retain: true)
            try await world.connectCentral()
            #expect(try await Self.read(world, PeripheralWorld.tx) == Array("good".utf8))
            #expect(try await Self.read(world, Self.level) == [42])

            // Longer than the characteristic's 512 bytes: refused, not cut to 512.
            try await world.publish("test/tx", String(repeating: "a", count: 600))
            // Larger than the source payload limit (2048): refused unparsed.
            try await world.publish("test/tx", String(repeating: "b", count: 3000))
            // Numbers that used to trap, bare and out of range.
            for hostile in ["1e-9223372036854775808", "1e9223372036854775807", "256"] {
                try await world.publish("test/level", hostile)
            }
            try await Self.waitForCounter(
                world, "gattway.peripheral.source_values_refused{reason=too_long}", atLeast: 1)
            try await Self.waitForCounter(
                world, "gattway.peripheral.source_values_refused{reason=oversize}", atLeast: 1)
            try await Self.waitForCounter(
                world, "gattway.peripheral.source_values_refused{reason=unencodable}", atLeast: 3)
            #expect(try await Self.read(world, PeripheralWorld.tx) == Array("good".utf8))
            #expect(try await Self.read(world, Self.level) == [42])
            #expect(world.gattway.isRunning)
            #expect(!world.gattwayLog.contains(String(repeating: "a", count: 40)), "payload text in the log")
        }
    }

    @Test func aResponseTopicAimedAtASourceTopicIsRefused() async throws {
        let world = try await Self.world()
        try await world.run { world in
            try await world.waitForApplication()
            try await world.publish("test/tx", "good", retain: true)
            try await world.connectCentral()
            #expect(try await Self.read(world, PeripheralWorld.tx) == Array("good".utf8))
            // Gattway's answer would become the value every central reads.
            try await MQTTObserver.publish(
                port: world.broker.port, topic: "gattway/bridge/request/advertise", payload: #"{"enabled":true}"#,
                extraArguments: ["-V", "5", "-D", "publish", "response-topic", "test/tx"])
            try await world.observer.waitForMessage(on: "gattway/bridge/response/advertise") {
                $0.contains("gattway.Error.ForbiddenResponseTopic")
            }
            try await Self.waitForCounter(world, "gattway.mqtt.commands_refused{reason=response_topic}", atLeast: 1)
            #expect(try await Self.read(world, PeripheralWorld.tx) == Array("good".utf8))
            #expect(world.gattway.isRunning)
        }
    }
}
