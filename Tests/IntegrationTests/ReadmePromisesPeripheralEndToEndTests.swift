import DBus
import Foundation
import TestWorld
import Testing

/// The local peripheral's README promises: sink messages carry `device` and `offset` user properties, and a
/// retained source message received after a restart replaces the value kept in `state_dir`.
@Suite(.serialized, .timeLimit(.minutes(3)))
struct ReadmePromisesPeripheralEndToEndTests {
    private func write(_ world: PeripheralWorld, _ bytes: [UInt8], kind: String) async throws -> UInt8? {
        try await world.centralCall(
            "WriteValue",
            [
                .string(PeripheralWorld.central), .string(PeripheralWorld.rx), .bytes(bytes), .string(kind), .uint16(0),
            ]
        ).first?.byte
    }

    private func readEventually(_ world: PeripheralWorld, equals expected: String) async throws {
        let deadline = ContinuousClock.now + .seconds(20)
        var value: [UInt8] = []
        while ContinuousClock.now < deadline {
            value =
                try await world.centralCall(
                    "ReadValue", [.string(PeripheralWorld.central), .string(PeripheralWorld.tx), .uint16(0)]
                ).last?.bytes ?? []
            if value == Array(expected.utf8) { return }
            try await Task.sleep(for: .milliseconds(100))
        }
        throw TestWorldError("tx read \(String(decoding: value, as: UTF8.self)), expected \(expected)")
    }

    @Test func sinkMessagesNameTheWritingCentralAndTheOffset() async throws {
        let world = try await PeripheralWorld()
        try await world.run { world in
            let sink = try await MQTTPropertyObserver(.init(port: world.broker.port), filters: ["test/rx"])
            try await world.waitForApplication()
            try await world.connectCentral()  // ATT MTU 64: a long write goes in pieces of 59 bytes
            #expect(try await write(world, [0xCA, 0xFE], kind: "request") == 0)
            let short = try await sink.waitForMessage(on: "test/rx") { $0.payload == "cafe" }
            #expect(short.userProperty("device") == PeripheralWorld.central, "\(short)")
            #expect(short.userProperty("offset") == "0", "\(short)")
            // A long write arrives as two prepared pieces (offsets 0 and 59) and is published whole, from offset 0.
            let long = (0..<62).map { UInt8($0) }
            #expect(try await write(world, long, kind: "prepared") == 0)
            let whole = try await sink.waitForMessage(on: "test/rx", skipping: 1)
            #expect(whole.payload == long.map { String(format: "%02x", $0) }.joined(), "\(whole)")
            #expect(whole.userProperty("device") == PeripheralWorld.central, "\(whole)")
            #expect(whole.userProperty("offset") == "0", "\(whole)")
            await sink.stop()
        }
    }

    @Test func aRetainedSourceMessageAfterARestartReplacesTheStoredValue() async throws {
        let world = try await PeripheralWorld()
        try await world.run { world in
            try await world.waitForApplication()
            try await world.publish("test/tx", "stored-before-restart")
            try await world.connectCentral()
            try await readEventually(world, equals: "stored-before-restart")
            _ = try await world.centralCall("Disconnect", [.string(PeripheralWorld.central)])
            await world.gattway.stop()
            // Published while gattway is down: newer than what state_dir holds.
            try await world.publish("test/tx", "retained-while-stopped", retain: true)
            let restarted = try world.restartGattway()
            do {
                try await world.waitForApplication()
                try await world.connectCentral()
                try await readEventually(world, equals: "retained-while-stopped")
                #expect(
                    restarted.errorOutput.contains("peripheral.values.restored"),
                    "\(restarted.errorOutput.suffix(2000))")
            } catch {
                Issue.record("restarted gattway log:\n\(restarted.errorOutput.suffix(3000))")
                await restarted.stop()
                throw error
            }
            await restarted.stop()
        }
    }
}
