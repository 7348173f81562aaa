import DBus
import Foundation
import TestWorld
import Testing

/// Both modes in one daemon: the local peripheral's own broker connection (`<client_id>-peripheral`) stops
/// reading while a slow central drains its queue, and the central bridge keeps answering commands and publishing
/// notifications on the main connection meanwhile.
@Suite(.serialized, .timeLimit(.minutes(4)))
struct ReadmePromisesBothModesEndToEndTests {
    static let flood = 3_000
    static let config =
        Configs.strapAndLock + """

            peripheral:
              adapter: hci0
              advertise: { local_name: gw-both, service_uuids: ["\(PeripheralWorld.service)"] }
              services:
                - uuid: "\(PeripheralWorld.service)"
                  characteristics:
                    - uuid: "\(PeripheralWorld.tx)"
                      name: tx
                      flags: [read, notify]
                      source_topic: test/tx
                      codec: utf8
                      queue: { depth: 4, when_full: backpressure }
            """

    private func centralCall(_ world: CentralWorld, _ method: String, _ arguments: [DBusValue]) async throws
        -> [DBusValue]
    {
        try await world.control.connection.call(
            destination: "org.gattway.Simulator1", path: "/org/gattway/simulator/central",
            interface: "org.gattway.Simulator1.Central", method: method, arguments: arguments, timeout: .seconds(30))
    }

    private func queueDepth(_ payload: String) -> Int? {
        let json = try? JSONSerialization.jsonObject(with: Data(payload.utf8)) as? [String: Any]
        let tx = (json?["characteristics"] as? [String: Any])?["tx"] as? [String: Any]
        return tx?["queue_depth"] as? Int
    }

    private func readPauses(_ payload: String, _ connection: String) -> Int? {
        let json = try? JSONSerialization.jsonObject(with: Data(payload.utf8)) as? [String: Any]
        let counters = json?["counters"] as? [String: Any]
        return (counters?["gattway.mqtt.read_pauses{connection=\(connection)}"] as? NSNumber)?.intValue
    }

    @Test func aBackpressuredPeripheralLeavesTheCentralBridgeFree() async throws {
        let world = try await CentralWorld(
            scenario: "demo.yaml", config: Self.config, extraMQTT: "  metrics_interval: 1")
        try await world.run { world in
            try await world.observer.waitForMessage(on: "gattway/lock/availability") { $0 == "online" }
            try await withDeadline(.seconds(30), "gattway's GATT application") {
                while try await centralCall(world, "GetApplications", []).first?.string?.contains(PeripheralWorld.tx)
                    != true
                {
                    try await Task.sleep(for: .milliseconds(100))
                }
            }
            // A central that takes 20 notifications a second: the flood needs minutes to drain.
            _ = try await centralCall(
                world, "Connect",
                [
                    .string(PeripheralWorld.central),
                    .stringVariantDictionary([
                        "mtu": .uint16(64), "rate": .double(20), "buffer": .uint32(4),
                    ]),
                ])
            _ = try await centralCall(
                world, "WriteCCC", [.string(PeripheralWorld.central), .string(PeripheralWorld.tx), .uint16(1)])
            try await world.observer.waitForMessage(on: "gattway/peripheral/status") {
                $0.contains(#""subscribers":1"#)
            }
            // mosquitto_pub replaces the shell (`exec`), reading the flood from a file: stopping the child stops the
            // publisher itself, where a pipeline's publisher outlived the shell that was stopped.
            let publisher = try ChildProcess(
                "/bin/sh",
                [
                    "-c",
                    "f=$(mktemp) && seq 1 \(Self.flood) > \"$f\" && exec < \"$f\" && rm \"$f\" && "
                        + "exec mosquitto_pub -h 127.0.0.1 -p \(world.broker.port) -t test/tx -q 1 -l",
                ])
            defer { Task { await publisher.stop() } }
            // The peripheral's queue is full: from here on its connection holds back what the broker sends it.
            try await world.observer.waitForMessage(on: "gattway/peripheral/status") { queueDepth($0) == 4 }

            try await world.publish(
                "gattway/lock/control/set", #"{"value":"lock","transaction":"during-backpressure"}"#)
            try await world.observer.waitForMessage(on: "gattway/lock/control/set/result") {
                $0 == #"{"ok":true,"transaction":"during-backpressure"}"#
            }
            try await world.control.notify("C4:7C:8D:6A:3E:11", uuid: "2A37", [0x00, 0xC9])
            try await world.observer.waitForMessage(on: "gattway/chest-strap/heart_rate") { $0 == #"{"bpm":201}"# }

            // All of that happened while the flood was still far from delivered, and what the central did receive
            // is the flood's beginning, whole and in order: nothing was taken from the peripheral's messages.
            let delivered =
                try await centralCall(
                    world, "GetReceived",
                    [
                        .string(PeripheralWorld.central), .string(PeripheralWorld.tx), .uint32(0),
                    ]
                ).first?.arrayElements?.compactMap { $0.bytes.flatMap { Int(String(decoding: $0, as: UTF8.self)) } }
                ?? []
            #expect(
                delivered.count < Self.flood / 2, "the central already received \(delivered.count) of \(Self.flood)")
            #expect(!delivered.isEmpty, "the central received nothing of the flood")
            #expect(delivered == (0..<delivered.count).map { $0 + 1 }, "\(delivered.prefix(40))")
            // The peripheral's connection is the one that stopped reading; the main one never did.
            let snapshot = try await world.observer.waitForMessage(on: "gattway/bridge/metrics") {
                (readPauses($0, "peripheral") ?? 0) >= 1
            }
            #expect(readPauses(snapshot.payload, "main") == 0, "\(snapshot.payload)")
            // Two connections, as the README says: the peripheral's carries its own client id.
            let log = await world.broker.log
            #expect(log.contains("as gattway-e2e ") && log.contains("as gattway-e2e-peripheral "))
        }
    }
}
