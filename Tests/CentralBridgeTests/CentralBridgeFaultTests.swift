import BluetoothCore
import BridgeTesting
import Foundation
import Logging
import MQTTCore
import ServiceLifecycle
import Testing

@testable import CentralBridge

/// The central bridge's faults found by reading it, each as a behaviour that must hold.
@Suite(.timeLimit(.minutes(1)))
struct CentralBridgeFaultTests {
    typealias Harness = CentralBridgeHarness
    static let heartRate = BluetoothUUID("2A37")!
    /// Reconnects without a noticeable backoff, so a flapping device cycles quickly.
    static let quickReconnect = ", reconnect: { initial: 0.01, max: 0.01 }"

    /// Fault 2: a graceful stop with commands queued for a device that cannot connect ends, answers every
    /// queued command and says the device offline.
    @Test func gracefulStopAnswersCommandsQueuedForAnUnreachableDevice() async throws {
        let world = try Harness(yaml: { Harness.strapAndLock(stateDirectory: $0) })
        world.central.setConnectBehaviour(.hang, for: Harness.strap)
        let group = ServiceGroup(
            configuration: ServiceGroupConfiguration(
                services: [world.bridge], logger: Logger(label: "gattway.test.group")))
        try await withThrowingTaskGroup(of: Void.self) { tasks in
            tasks.addTask { try await group.run() }
            world.central.advertise(Harness.strap)
            _ = try await world.central.operations.first { $0 == .connect(Harness.strap.path) }
            for index in 0..<3 {
                try await world.send("gw/strap/control/set", #"{"value":"0\#(index)","transaction":\#(index)}"#)
            }
            // Commands are taken in order: once a later request is answered, the three are queued.
            try await world.send("gw/bridge/request/devices", "{}")
            _ = try await world.next(on: "gw/bridge/response/devices")
            await group.triggerGracefulShutdown()
            try await tasks.next()  // run() returned
            let answers = world.broker.published(on: "gw/strap/control/set/result")
            #expect(answers.count == 3)
            #expect(answers.allSatisfy { $0.payloadText.contains(#""ok":false"#) })
            #expect(world.broker.retainedMessages["gw/strap/availability"]?.payloadText == "offline")
        }
    }

    /// Fault 3: a device that drops its link again and again leaves no task behind per cycle.
    @Test func aFlappingDeviceLeavesNoTaskBehindPerReconnect() async throws {
        let world = try Harness(yaml: { Harness.strapAndLock(stateDirectory: $0, extra: Self.quickReconnect) })
        try await world.run {
            world.central.advertise(Harness.strap)
            try await world.waitOnline("strap")
            for _ in 0..<25 {
                let mark = world.broker.publicationCount
                world.central.dropLink(Harness.strap)
                _ = try await world.next(on: "gw/strap/availability", since: mark) { $0.payloadText == "offline" }
                try await world.waitOnline("strap", since: mark)
            }
            // Both devices' tasks, the strap's link loop, and at most the short jobs of the last connect (device name,
            // devices list); a leak of one task per cycle would leave 25 more.
            let mark = world.broker.publicationCount
            try await world.send("gw/bridge/request/devices", "{}")
            _ = try await world.next(on: "gw/bridge/response/devices", since: mark)
            #expect(world.bridge.runningJobCount <= 6)
        }
    }

    /// Fault 6: advertisers faking a `match:` rule fill the matched slots, yet a device configured by address is
    /// still tracked and connected.
    @Test func fakeMatchingAdvertisersCannotTakeTheSlotOfAnAddressedDevice() async throws {
        let world = try Harness(yaml: { directory in
            Harness.strapAndLock(stateDirectory: directory, extra: ", max_tracked_devices: 2")
                + "\n  - { name: sensor, match: { name_prefix: ATC }, connect: never }"
        })
        try await world.run {
            for index in 1...6 {
                world.central.advertise(FakePeripheral(address: "A4:C1:38:00:00:0\(index)", name: "ATC_fake\(index)"))
            }
            _ = try await world.next(on: "gw/sensor_a4c138000002/availability")
            world.central.advertise(Harness.strap)
            try await world.waitOnline("strap")
            let mark = world.broker.publicationCount
            try await world.send("gw/bridge/request/devices", "{}")
            let list = try await world.next(on: "gw/bridge/response/devices", since: mark).payloadText
            #expect(list.contains(#""name":"strap""#))
            #expect(!list.contains("a4c138000003"))
        }
    }

    /// Fault 7: both notification paths follow one de-duplication rule: after a restart the first value equal to
    /// the retained one is not published again; after a reconnect within a run, every value is.
    @Test(arguments: [true, false])
    func bothNotificationPathsDeduplicateAlike(socket: Bool) async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("central-dedup-\(UUID())").path
        let yaml: (String) -> String = { Harness.strapAndLock(stateDirectory: $0, extra: Self.quickReconnect) }
        // First run: 0x48 is published and remembered.
        let first = try Harness(yaml: yaml, stateDirectory: directory)
        if !socket { first.central.refuseAcquireNotify(of: Harness.strap) }
        try await first.run {
            first.central.advertise(Harness.strap)
            try await first.waitOnline("strap")
            first.central.notify(Harness.strap, Self.heartRate, [0x48])
            _ = try await first.next(on: "gw/strap/heart_rate") { $0.payload == Array("48".utf8) }
        }
        // Second run: the same value is held back once, then published again after a reconnect.
        let second = try Harness(yaml: yaml, stateDirectory: directory)
        if !socket { second.central.refuseAcquireNotify(of: Harness.strap) }
        try await second.run {
            second.central.advertise(Harness.strap)
            try await second.waitOnline("strap")
            second.central.notify(Harness.strap, Self.heartRate, [0x48])
            second.central.notify(Harness.strap, Self.heartRate, [0x49])
            _ = try await second.next(on: "gw/strap/heart_rate") { $0.payload == Array("49".utf8) }
            #expect(second.broker.published(on: "gw/strap/heart_rate").map(\.payloadText) == ["49"])
            let mark = second.broker.publicationCount
            second.central.dropLink(Harness.strap)
            try await second.waitOnline("strap", since: mark)
            second.central.notify(Harness.strap, Self.heartRate, [0x49])
            second.central.notify(Harness.strap, Self.heartRate, [0x4A])
            _ = try await second.next(on: "gw/strap/heart_rate", since: mark) { $0.payload == Array("4a".utf8) }
            #expect(second.broker.published(on: "gw/strap/heart_rate").map(\.payloadText) == ["49", "49", "4a"])
        }
    }
}
