import DBus
import Foundation
import TestWorld
import Testing

/// The StartNotify path end to end: the simulator refuses AcquireNotify (as BlueZ does for characteristics without
/// the notify-acquire support, or an older bluetoothd), so Gattway subscribes with StartNotify and values arrive as
/// PropertiesChanged(Value) signals through dbus-daemon.
@Suite(.serialized, .timeLimit(.minutes(3)))
struct CentralStartNotifyEndToEndTests {
    private func withWorld(_ body: (CentralWorld) async throws -> Void) async throws {
        let world = try await CentralWorld(scenario: "demo.yaml", config: Configs.strapAndLock) { control in
            try await control.call(
                "InjectError",
                [
                    .string("AcquireNotify"), .string("org.bluez.Error.NotSupported"),
                    .string("Operation is not supported"), .uint32(0),
                ])
        }
        try await world.run { world in
            try await body(world)
        }
    }

    @Test func notificationsArriveInOrderThroughStartNotify() async throws {
        try await withWorld { world in
            try await world.observer.waitForMessage(on: "gattway/chest-strap/availability") { $0 == "online" }
            try await world.observer.waitForMessage(on: "gattway/lock/availability") { $0 == "online" }
            let counters = try await world.control.counters()
            #expect((counters["calls.GattCharacteristic1.StartNotify"]?.uint64 ?? 0) >= 2, "counters: \(counters)")
            let before = world.observer.messages(on: "gattway/chest-strap/heart_rate").count
            for bpm in UInt8(100)..<UInt8(140) {
                try await world.control.notify("C4:7C:8D:6A:3E:11", uuid: "2A37", [0x00, bpm])
            }
            try await world.observer.waitForMessage(on: "gattway/chest-strap/heart_rate", skipping: before) {
                $0 == #"{"bpm":139}"#
            }
            let received = world.observer.messages(on: "gattway/chest-strap/heart_rate").dropFirst(before)
                .map(\.payload).filter { payload in (100..<140).contains { payload == #"{"bpm":\#($0)}"# } }
            #expect(received == (100..<140).map { #"{"bpm":\#($0)}"# })
        }
    }

    @Test func aWriteAndItsNotifiedStateAndARead() async throws {
        try await withWorld { world in
            try await world.observer.waitForMessage(on: "gattway/lock/availability") { $0 == "online" }
            try await world.publish("gattway/lock/control/set", "unlock")
            try await world.observer.waitForMessage(on: "gattway/lock/control/set/result") { $0 == #"{"ok":true}"# }
            try await world.observer.waitForMessage(on: "gattway/lock/state") { $0 == "unlock" }
            // A read's value comes back as PropertiesChanged(Value) too and lands on the value topic.
            let before = world.observer.messages(on: "gattway/lock/state").count
            try await world.publish("gattway/lock/state/get", "")
            try await world.observer.waitForMessage(on: "gattway/lock/state", skipping: before) { $0 == "unlock" }
        }
    }

    @Test func notificationsResumeAfterTheDeviceReconnects() async throws {
        try await withWorld { world in
            try await world.observer.waitForMessage(on: "gattway/chest-strap/availability") { $0 == "online" }
            try await world.control.disconnect("C4:7C:8D:6A:3E:11")
            try await world.observer.waitForMessage(on: "gattway/chest-strap/availability") { $0 == "offline" }
            let onlineBefore = world.observer.messages(on: "gattway/chest-strap/availability").count
            try await world.observer.waitForMessage(
                on: "gattway/chest-strap/availability", skipping: onlineBefore - 1
            ) { $0 == "online" }
            try await world.control.notify("C4:7C:8D:6A:3E:11", uuid: "2A37", [0x00, 0xC9])
            try await world.observer.waitForMessage(on: "gattway/chest-strap/heart_rate") { $0 == #"{"bpm":201}"# }
        }
    }
}
