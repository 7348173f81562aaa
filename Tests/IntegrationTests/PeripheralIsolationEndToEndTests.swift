import DBus
import Foundation
import TestWorld
import Testing

/// One slow central must not freeze the others: each subscriber drains in its own task, and one that holds the
/// peripheral's MQTT connection past `stall_limit` is dropped and counted. And the StartNotify path end to end.
@Suite(.serialized, .timeLimit(.minutes(4)))
struct PeripheralIsolationEndToEndTests {
    static let second = "22:33:44:55:66:77"
    static let b = "6e400004-b5a3-f393-e0a9-e50e24dcca9e"
    static let bCharacteristic = """
                - uuid: "\(b)"
                  name: b
                  flags: [read, notify]
                  source_topic: test/b
                  codec: utf8
        """

    /// Fault 5: central 1 drains characteristic tx at 0.2 notifications/s while 2,000 messages arrive on tx's
    /// source topic; central 2, subscribed to b, still gets the message published on b's source topic after them.
    @Test func aSlowCentralDoesNotFreezeAnotherCentralsCharacteristic() async throws {
        let world = try await PeripheralWorld(
            extraCharacteristics: Self.bCharacteristic, extraPeripheral: "stall_limit: 2")
        try await world.run { world in
            try await world.waitForApplication()
            try await world.connectCentral(rate: 0.2, buffer: 1)
            try await world.connectCentral(Self.second)
            _ = try await world.centralCall(
                "WriteCCC", [.string(PeripheralWorld.central), .string(PeripheralWorld.tx), .uint16(1)])
            _ = try await world.centralCall("WriteCCC", [.string(Self.second), .string(Self.b), .uint16(1)])
            try await world.control.waitForCounter("server.notify_acquired", atLeast: 2)

            let publisher = try ChildProcess(
                "/bin/sh",
                [
                    "-c",
                    "seq 1 2000 | mosquitto_pub -h 127.0.0.1 -p \(world.broker.port) -t test/tx -q 1 -l",
                ])
            #expect(await publisher.waitForExit(timeout: .seconds(60)) == 0)
            try await world.publish("test/b", "to-the-second-central")

            // Awaited with a deadline; no time is asserted. Before the fix it never came while tx's backlog drained.
            let deadline = ContinuousClock.now + .seconds(60)
            var received: [String] = []
            while ContinuousClock.now < deadline && !received.contains("to-the-second-central") {
                received += try await world.received(central: Self.second, characteristic: Self.b)
                    .map { String(decoding: $0, as: UTF8.self) }
                if !received.contains("to-the-second-central") { try await Task.sleep(for: .milliseconds(100)) }
            }
            #expect(received == ["to-the-second-central"])
            // The slow central's subscriber was dropped and counted.
            try await world.observer.waitForMessage(on: "gattway/peripheral/status") { payload in
                let json = try? JSONSerialization.jsonObject(with: Data(payload.utf8)) as? [String: Any]
                let tx = (json?["characteristics"] as? [String: Any])?["tx"] as? [String: Any]
                return ((tx?["subscribers_dropped"] as? NSNumber)?.intValue ?? 0) >= 1
            }
            #expect(world.gattwayLog.contains("peripheral.subscriber.dropped"))
        }
    }

    /// A bluetoothd that uses StartNotify (as every one before 5.48 does for a local characteristic): values go out
    /// as PropertiesChanged to the subscribed central; disabling the CCC stops the session and enabling it again
    /// opens a new one.
    @Test func valuesReachACentralTheStartNotifyWay() async throws {
        let world = try await PeripheralWorld(simulatorArguments: ["--bluez-version", "5.47"])
        try await world.run { world in
            try await world.waitForApplication()
            try await world.connectCentral()
            let ccc: (UInt16) async throws -> Void = { value in
                _ = try await world.centralCall(
                    "WriteCCC", [.string(PeripheralWorld.central), .string(PeripheralWorld.tx), .uint16(value)])
            }
            try await ccc(1)
            try await world.observer.waitForMessage(on: "gattway/peripheral/status") {
                $0.contains(#""subscribers":1"#)
            }
            try await world.publish("test/tx", "first")
            #expect(try await world.waitForReceived(count: 1) == [Array("first".utf8)])
            try await ccc(0)
            try await world.observer.waitForMessage(on: "gattway/peripheral/status") {
                $0.contains(#""subscribers":0"#)
            }
            try await ccc(1)
            try await world.observer.waitForMessage(on: "gattway/peripheral/status") {
                $0.contains(#""subscribers":1"#)
            }
            try await world.publish("test/tx", "second")
            #expect(try await world.waitForReceived(count: 1) == [Array("second".utf8)])
            #expect(try await world.control.counter("server.notify_acquired") == 0)
        }
    }
}
