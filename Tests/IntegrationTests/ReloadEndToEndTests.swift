import Foundation
import TestWorld
import Testing

/// `systemctl reload gattway` (SIGHUP) applies the file's devices without dropping the others.
@Suite(.serialized, .timeLimit(.minutes(3)))
struct ReloadEndToEndTests {
    /// Everything after CentralWorld's `mqtt:` section and state_dir, as `Configs.strapAndLock` has it, but with the
    /// devices chosen by the test.
    private func devices(_ entries: [String]) -> String {
        let bluetooth = Configs.strapAndLock.components(separatedBy: "devices:")[0]
        let all = Configs.strapAndLock.components(separatedBy: "devices:")[1]
        let blocks = all.components(separatedBy: "\n  - ").dropFirst().map { "  - " + $0 }
        let chosen = blocks.filter { block in entries.contains { block.hasPrefix("  - name: \($0)\n") } }
        return bluetooth + "devices:\n" + chosen.map { $0.hasSuffix("\n") ? $0 : $0 + "\n" }.joined()
    }

    private func rewrite(_ world: CentralWorld, _ body: String) throws {
        let mqtt = try String(contentsOfFile: world.configPath, encoding: .utf8).components(separatedBy: "bluetooth:")[
            0]
        try (mqtt + body).write(toFile: world.configPath, atomically: true, encoding: .utf8)
    }

    /// Every `bridge/event` seen matches schemas/mqtt/bridge-event.schema.json.
    private func expectEventsMatchTheirSchema(_ world: CentralWorld) async throws {
        let cases = world.observer.messages(on: "gattway/bridge/event").map {
            (topic: $0.topic, schema: "bridge-event.schema.json", payload: $0.payload)
        }
        #expect(!cases.isEmpty)
        let problems = try await PayloadSchemas.problems(cases)
        #expect(problems.isEmpty, "\(problems.joined(separator: "\n"))")
    }

    @Test func aRemovedDeviceIsLetGoAndAnAddedOneTakenUpWhileTheOthersRunOn() async throws {
        let world = try await CentralWorld(scenario: "demo.yaml", config: devices(["chest-strap", "lock"]))
        try await world.run { world in
            try await world.observer.waitForMessage(on: "gattway/lock/availability") { $0 == "online" }
            try await world.observer.waitForMessage(on: "gattway/chest-strap/availability") { $0 == "online" }

            try rewrite(world, devices(["chest-strap", "thermometer"]))
            world.gattway.send(SIGHUP)
            let event = try await world.observer.waitForMessage(on: "gattway/bridge/event") {
                $0.contains("configuration_reloaded")
            }
            #expect(event.payload.contains(#""released":["lock"]"#))
            #expect(event.payload.contains(#""restart_needed":[]"#))
            try await world.observer.waitForMessage(on: "gattway/lock/availability") { $0 == "offline" }
            // The new passive entry is taken up from what bluetoothd already heard.
            try await world.observer.waitForMessage(on: "gattway/thermometer/availability") { $0 == "online" }
            // The strap kept its link: values keep coming after the reload, and it never went offline.
            let valuesBefore = world.observer.messages(on: "gattway/chest-strap/heart_rate").count
            try await world.observer.waitForMessage(on: "gattway/chest-strap/heart_rate", skipping: valuesBefore)
            #expect(
                !world.observer.messages(on: "gattway/chest-strap/availability").contains { $0.payload == "offline" })
            // The lock's command topics are no longer served.
            try await world.publish("gattway/lock/control/set", "unlock")
            try await world.publish("gattway/bridge/request/devices", #"{"transaction":"after"}"#)
            let list = try await world.observer.waitForMessage(on: "gattway/bridge/response/devices") {
                $0.contains("after")
            }
            #expect(!list.payload.contains(#""lock""#))
            #expect(world.observer.messages(on: "gattway/lock/control/set/result").isEmpty)
            #expect(
                try await world.control.writes("D0:0D:10:C4:00:01", uuid: "0000fff1-0000-1000-8000-00805f9b34fb")
                    .isEmpty)

            // Back again: the lock is connected anew.
            let offlineCount = world.observer.messages(on: "gattway/lock/availability").count
            try rewrite(world, devices(["chest-strap", "lock", "thermometer"]))
            world.gattway.send(SIGHUP)
            try await world.observer.waitForMessage(on: "gattway/lock/availability", skipping: offlineCount) {
                $0 == "online"
            }
            try await expectEventsMatchTheirSchema(world)
        }
    }

    @Test func anInvalidFileKeepsTheRunningConfigurationAndSaysWhy() async throws {
        let world = try await CentralWorld(scenario: "demo.yaml", config: devices(["chest-strap", "lock"]))
        try await world.run { world in
            try await world.observer.waitForMessage(on: "gattway/lock/availability") { $0 == "online" }
            try rewrite(
                world, devices(["chest-strap", "lock"]) + "  - { name: broken, address: \"not-an-address\" }\n")
            world.gattway.send(SIGHUP)
            let event = try await world.observer.waitForMessage(on: "gattway/bridge/event") {
                $0.contains("configuration_invalid")
            }
            #expect(event.payload.contains("devices[2].address"))
            try await expectEventsMatchTheirSchema(world)
            // Still serving the lock as before.
            try await world.publish("gattway/lock/control/set", #"{"value":"lock","transaction":"still"}"#)
            try await world.observer.waitForMessage(on: "gattway/lock/control/set/result") {
                $0 == #"{"ok":true,"transaction":"still"}"#
            }
            #expect(!world.observer.messages(on: "gattway/lock/availability").contains { $0.payload == "offline" })
        }
    }

    @Test func changesOutsideTheDevicesWaitForARestart() async throws {
        let world = try await CentralWorld(scenario: "demo.yaml", config: devices(["chest-strap"]))
        try await world.run { world in
            try await world.observer.waitForMessage(on: "gattway/chest-strap/availability") { $0 == "online" }
            let text = try String(contentsOfFile: world.configPath, encoding: .utf8)
            try text.replacingOccurrences(of: "request_timeout: 3", with: "request_timeout: 4")
                .write(toFile: world.configPath, atomically: true, encoding: .utf8)
            world.gattway.send(SIGHUP)
            let event = try await world.observer.waitForMessage(on: "gattway/bridge/event") {
                $0.contains("configuration_reloaded")
            }
            #expect(event.payload.contains(#""restart_needed":["bluetooth"]"#))
            #expect(event.payload.contains(#""released":[]"#))
        }
    }
}
