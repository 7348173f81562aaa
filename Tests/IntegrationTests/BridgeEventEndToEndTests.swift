import Foundation
import TestWorld
import Testing

/// `bridge/event` tells an operator what happened to each device's link, and why.
@Suite(.serialized, .timeLimit(.minutes(3)))
struct BridgeEventEndToEndTests {
    private func events(_ world: CentralWorld, _ type: String, _ device: String) -> [String] {
        world.observer.messages(on: "gattway/bridge/event").map(\.payload).filter {
            $0.contains(#""type":"\#(type)""#) && $0.contains(#""device":"\#(device)""#)
        }
    }

    private func waitForEvent(
        _ world: CentralWorld, _ type: String, _ device: String, reason: String? = nil, skipping: Int = 0
    ) async throws {
        try await world.observer.waitForMessage(on: "gattway/bridge/event", skipping: skipping) { payload in
            payload.contains(#""type":"\#(type)""#) && payload.contains(#""device":"\#(device)""#)
                && (reason.map { payload.contains(#""reason":"\#($0)""#) } ?? true)
        }
    }

    @Test func connectsAndDisconnectsAreReportedWithTheirReason() async throws {
        let world = try await CentralWorld(scenario: "demo.yaml", config: Configs.strapAndLock)
        try await world.run { world in
            try await waitForEvent(world, "device_connected", "lock")
            // The peripheral goes away: nobody asked for it.
            var seen = world.observer.messages(on: "gattway/bridge/event").count
            try await world.control.disconnect("D0:0D:10:C4:00:01")
            try await waitForEvent(world, "device_disconnected", "lock", reason: "link_lost", skipping: seen)
            // The link comes back by itself (connect: always), and an operator asks for a disconnect.
            try await waitForEvent(world, "device_connected", "lock", skipping: seen)
            seen = world.observer.messages(on: "gattway/bridge/event").count
            try await world.publish("gattway/bridge/request/disconnect", #"{"device":"lock"}"#)
            try await waitForEvent(world, "device_disconnected", "lock", reason: "requested", skipping: seen)
            let cases = world.observer.messages(on: "gattway/bridge/event").map {
                (topic: $0.topic, schema: "bridge-event.schema.json", payload: $0.payload)
            }
            let problems = try await PayloadSchemas.problems(cases)
            #expect(problems.isEmpty, "\(problems.joined(separator: "\n"))")
            #expect(events(world, "device_connected", "chest-strap").count == 1)
        }
    }

    @Test func anIdleOnDemandDeviceIsReportedAsDisconnectedForIdleness() async throws {
        let world = try await CentralWorld(scenario: "demo.yaml", config: CentralCommandsEndToEndTests.onDemandLock)
        try await world.run { world in
            try await world.observer.waitForMessage(on: "gattway/lock/advert")
            try await world.publish("gattway/lock/control/set", "lock")
            try await waitForEvent(world, "device_connected", "lock")
            try await waitForEvent(world, "device_disconnected", "lock", reason: "idle_timeout")
            #expect(events(world, "device_disconnected", "lock").count == 1)
        }
    }
}
