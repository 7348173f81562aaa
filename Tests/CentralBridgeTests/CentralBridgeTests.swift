import BluetoothCore
import BridgeCore
import BridgeTesting
import Foundation
import MQTTCore
import Testing

@testable import CentralBridge

/// The central bridge's decisions, run against an in-memory broker and a fake central: no daemon, no sleeps.
@Suite(.timeLimit(.minutes(1)))
struct CentralBridgeTests {
    typealias Harness = CentralBridgeHarness
    static let heartRate = BluetoothUUID("2A37")!
    static let strapControl = BluetoothUUID("2A39")!
    static let lockControl = BluetoothUUID("FFF1")!

    @Test func alwaysDeviceIsConnectedAndItsNotificationsArePublished() async throws {
        let world = try Harness(yaml: { Harness.strapAndLock(stateDirectory: $0) })
        try await world.run {
            world.central.advertise(Harness.strap)
            try await world.waitOnline("strap")
            #expect(world.central.hasChannel(Harness.strap, Self.heartRate))
            world.central.notify(Harness.strap, Self.heartRate, [0x00, 0x48])
            let value = try await world.next(on: "gw/strap/heart_rate")
            #expect(value.payloadText == "0048" && value.retain)
        }
    }

    /// `bluetooth.advert_batch` reaches the central once its advertisement sink is set: 20 ms unless configured
    /// while a device may connect, none when 0, and never longer than `advert_min_interval`.
    @Test(arguments: [
        ("", Duration.milliseconds(20) as Duration?), (", advert_batch: 0.05", .milliseconds(50)),
        (", advert_batch: 0", nil), (", advert_batch: 0.05, advert_min_interval: 0.01", .milliseconds(10)),
    ])
    func advertBatchIsPassedToTheCentral(extra: String, expected: Duration?) async throws {
        let world = try Harness(yaml: { Harness.strapAndLock(stateDirectory: $0, extra: extra) })
        try await world.run {
            world.central.advertise(Harness.strap)
            try await world.waitOnline("strap")
            #expect(world.central.advertPacingRequests == [expected])
        }
    }

    /// A gateway that only listens gathers reports for 100 ms; a reload that brings an entry that may connect
    /// shortens the batch to 20 ms at once, so that the new device's values are read promptly, and one that takes it
    /// away lengthens it again.
    @Test func theDefaultBatchFollowsTheDevicesThroughReloads() async throws {
        func yaml(_ directory: String, connecting: Bool) -> String {
            """
            mqtt: { url: "mqtt://127.0.0.1", base_topic: gw }
            state_dir: \(directory)
            devices:
              - { name: sensor, match: { service: "FCD2" }, connect: never }
            \(connecting ? "  - { name: lock, address: \"D0:0D:10:C4:00:01\", connect: on_demand }" : "")
            """
        }
        let world = try Harness(yaml: { yaml($0, connecting: false) })
        try await world.run {
            try await world.waitForPacingRequests(1)
            #expect(world.central.advertPacingRequests == [.milliseconds(100)])
            await world.bridge.reload(try BridgeConfiguration(yaml: yaml(world.stateDirectory, connecting: true)))
            #expect(world.central.advertPacingRequests == [.milliseconds(100), .milliseconds(20)])
            await world.bridge.reload(try BridgeConfiguration(yaml: yaml(world.stateDirectory, connecting: false)))
            #expect(
                world.central.advertPacingRequests == [.milliseconds(100), .milliseconds(20), .milliseconds(100)])
        }
    }

    /// A connected device that keeps advertising: its reports are taken on the D-Bus loop (no actor hop) and still
    /// published; once its link ends they are the actor's again, and what it hears then is what is published.
    @Test func aConnectedDevicesReportsAreTakenOnTheLoopUntilItsLinkEnds() async throws {
        let world = try Harness(yaml: {
            Harness.strapAndLock(stateDirectory: $0, extra: ", advert_min_interval: 0.01")
        })
        try await world.run {
            world.central.advertise(Harness.strap)
            try await world.waitOnline("strap")
            // The link's Connected event re-registers the device; until then its reports are still events.
            #expect(
                try await world.advertiseUntilTaken(Harness.strap, rssi: -42),
                "a connected device's report is taken on the loop")
            _ = try await world.next(on: "gw/strap/advert") { $0.payloadText.contains(#""rssi":-42"#) }

            world.central.setConnectBehaviour(.hang, for: Harness.strap)
            let mark = world.broker.publicationCount
            world.central.dropLink(Harness.strap)
            _ = try await world.next(on: "gw/strap/availability", since: mark) { $0.payloadText == "offline" }
            #expect(!world.central.advertise(Harness.strap, rssi: -77), "without a link the actor hears it")
            _ = try await world.next(on: "gw/strap/advert", since: mark) { $0.payloadText.contains(#""rssi":-77"#) }
        }
    }

    /// The health report's adapter figures come from the bridge's own tree: no GetManagedObjects per check.
    @Test func adapterHealthCountsTheTreesDevicesOfTheAdapter() async throws {
        let world = try Harness(yaml: { Harness.strapAndLock(stateDirectory: $0) })
        try await world.run {
            world.central.advertise(Harness.strap)
            world.central.advertise(Harness.lock)
            try await world.waitOnline("strap")
            var health = await world.bridge.adapterHealth()
            let deadline = ContinuousClock.now + .seconds(10)
            while health?.devicesKnown != 2 || health?.devicesConnected != 1, ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(10))
                health = await world.bridge.adapterHealth()
            }
            #expect(health == AdapterHealth(powered: true, devicesKnown: 2, devicesConnected: 1))
        }
    }

    @Test func setIsWrittenWithResponseAndAnswered() async throws {
        let world = try Harness(yaml: { Harness.strapAndLock(stateDirectory: $0) })
        try await world.run {
            world.central.advertise(Harness.strap)
            try await world.waitOnline("strap")
            try await world.send("gw/strap/control/set", #"{"value":"0102","transaction":"t1"}"#)
            let result = try await world.next(on: "gw/strap/control/set/result")
            #expect(result.payloadText.contains(#""ok":true"#) && result.payloadText.contains(#""transaction":"t1""#))
            let control = Harness.strap.characteristic(Self.strapControl).path
            _ = try await world.central.operations.first { $0 == .write(control, [1, 2], withResponse: true) }
        }
    }

    /// Fault 1: a connect that hangs (the lock's) holds up no command of another device.
    @Test func aHangingConnectRequestHoldsUpNoOtherDevicesCommands() async throws {
        let world = try Harness(yaml: { Harness.strapAndLock(stateDirectory: $0) })
        try await world.run {
            world.central.setConnectBehaviour(.hang, for: Harness.lock)
            world.central.advertise(Harness.strap)
            world.central.advertise(Harness.lock)
            try await world.waitOnline("strap")
            try await world.send("gw/bridge/request/connect", #"{"device":"lock"}"#)
            _ = try await world.central.operations.first { $0 == .connect(Harness.lock.path) }
            try await world.send("gw/lock/control/set", #"{"value":"open"}"#)
            try await world.send("gw/strap/control/set", #"{"value":"ff"}"#)
            let result = try await world.next(on: "gw/strap/control/set/result")
            #expect(result.payloadText.contains(#""ok":true"#))
            world.central.releaseHungConnects()
        }
    }

    /// Fault 4: scan windows are capped in number; one past the cap is answered Busy at once.
    /// A gateway with no devices (one that only serves its local peripheral) does not scan, except while a scan
    /// request runs; one with devices scans from the start.
    @Test func discoveryRunsOnlyWhileSomethingNeedsIt() async throws {
        let idle = try Harness(yaml: { directory in
            """
            mqtt: { url: "mqtt://127.0.0.1", base_topic: gw }
            bluetooth: { adapter: hci0 }
            state_dir: \(directory)
            """
        })
        try await idle.run {
            try await idle.waitForRequestSubscription()
            #expect(!idle.central.operations.entries.contains(.startDiscovery))
            try await idle.send("gw/bridge/request/scan", #"{"duration":0.2,"transaction":"s1"}"#)
            let answer = try await idle.next(on: "gw/bridge/response/scan")
            #expect(answer.payloadText.contains(#""transaction":"s1""#))
            _ = try await idle.central.operations.first { $0 == .stopDiscovery }
            #expect(idle.central.operations.entries.filter { $0 == .startDiscovery }.count == 1)
        }
        let busy = try Harness(yaml: { Harness.strapAndLock(stateDirectory: $0) })
        try await busy.run {
            _ = try await busy.central.operations.first { $0 == .startDiscovery }
        }
    }

    @Test func scansBeyondTheCapAreRefusedAtOnce() async throws {
        let world = try Harness(yaml: { Harness.strapAndLock(stateDirectory: $0) })
        try await world.run {
            try await world.waitForRequestSubscription()
            for index in 0...CentralBridge.maxScansInFlight {
                try await world.send("gw/bridge/request/scan", #"{"duration":300,"transaction":\#(index)}"#)
            }
            let answer = try await world.next(on: "gw/bridge/response/scan")
            #expect(answer.payloadText.contains("gattway.Error.Busy"))
            #expect(answer.payloadText.contains(#""transaction":\#(CentralBridge.maxScansInFlight)"#))
        }
    }

    /// One GATT operation in flight per device and a bounded queue: past it, a command is answered Busy at once,
    /// and the queued ones are answered when the operation in flight gives up.
    @Test func commandsPastTheQueueBoundAreRefusedAndQueuedOnesAnswered() async throws {
        let world = try Harness(yaml: { Harness.strapAndLock(stateDirectory: $0) })
        try await world.run {
            world.central.setConnectBehaviour(.hang, for: Harness.lock)
            world.central.advertise(Harness.lock)
            let total = CentralBridge.maxQueuedCommandsPerDevice + 2
            for index in 0..<total {
                try await world.send("gw/lock/control/set", #"{"value":"x","transaction":\#(index)}"#)
            }
            let busy = try await world.next(on: "gw/lock/control/set/result")
            #expect(
                busy.payloadText.contains("gattway.Error.Busy")
                    && busy.payloadText.contains(#""transaction":\#(total - 1)"#))
            #expect(world.central.operations.entries.filter { $0 == .connect(Harness.lock.path) }.count == 1)
            world.central.setConnectBehaviour(
                .fail(BlueZError(.failed, "Software caused connection abort")), for: Harness.lock)
            world.central.releaseHungConnects()
            let last = try await world.next(on: "gw/lock/control/set/result") {
                $0.payloadText.contains(#""transaction":\#(total - 2)"#)
            }
            #expect(last.payloadText.contains(#""ok":false"#))
            #expect(world.broker.published(on: "gw/lock/control/set/result").count == total)
        }
    }

    /// Time comes from the injected clock: an on_demand device stays connected, however long the test takes,
    /// until the manual clock passes its idle timeout; then it is disconnected.
    @Test func onDemandDeviceIsDisconnectedWhenTheInjectedClockPassesItsIdleTimeout() async throws {
        let manual = ManualClock()
        let world = try Harness(yaml: { Harness.strapAndLock(stateDirectory: $0) }, clock: BridgeClock(manual))
        try await world.run {
            world.central.advertise(Harness.lock)
            try await world.send("gw/lock/control/set", #"{"value":"open"}"#)
            _ = try await world.next(on: "gw/lock/control/set/result") { $0.payloadText.contains(#""ok":true"#) }
            #expect(!world.central.operations.entries.contains(.disconnect(Harness.lock.path)))
            // The idle timer is armed after the answer; each step waits briefly for the disconnect it may cause.
            var disconnected = false
            for _ in 0..<50 where !disconnected {
                manual.advance(by: .seconds(30))
                disconnected =
                    (try? await world.central.operations.first(timeout: .milliseconds(100)) {
                        $0 == .disconnect(Harness.lock.path)
                    }) != nil
            }
            #expect(disconnected)
        }
    }

    /// A device another adapter of the host hears is not this gateway's: only the configured adapter's device is
    /// tracked and connected.
    @Test func onlyTheConfiguredAdaptersDevicesAreTracked() async throws {
        let world = try Harness(yaml: { Harness.strapAndLock(stateDirectory: $0) })
        let strapOnHCI1 = FakePeripheral(
            address: "C4:7C:8D:6A:3E:11", name: "Polar H10", adapter: "hci1",
            services: [(BluetoothUUID("180D")!, [(BluetoothUUID("2A37")!, ["notify"])])])
        try await world.run {
            world.central.advertise(strapOnHCI1, rssi: -40)
            world.central.advertise(Harness.strap, rssi: -80)
            _ = try await world.central.operations.first { $0 == .connect(Harness.strap.path) }
            try await world.waitOnline("strap")
            #expect(!world.central.operations.entries.contains(.connect(strapOnHCI1.path)))
            let mark = world.broker.publicationCount
            try await world.send("gw/bridge/request/devices", "{}")
            let list = try await world.next(on: "gw/bridge/response/devices", since: mark).payloadText
            #expect(list.components(separatedBy: #""name":"strap""#).count == 2, "one strap: \(list)")
        }
    }

    /// Each device's work runs in the device's own task: removing the device ends it, even a connect that hangs.
    @Test func removingADeviceEndsItsOwnTaskAndWhatRunsInIt() async throws {
        let world = try Harness(yaml: { Harness.strapAndLock(stateDirectory: $0) })
        try await world.run {
            world.central.setConnectBehaviour(.hang, for: Harness.strap)
            world.central.advertise(Harness.strap)
            world.central.advertise(Harness.lock)
            _ = try await world.central.operations.first { $0 == .connect(Harness.strap.path) }
            try await world.send("gw/bridge/request/remove", #"{"device":"strap"}"#)
            let answer = try await world.next(on: "gw/bridge/response/remove")
            #expect(answer.payloadText.contains(#""ok":true"#))
            // The strap's link loop, blocked in the hanging connect, was cancelled with the strap's task.
            _ = try await world.central.operations.first { $0 == .connectCancelled(Harness.strap.path) }
            let mark = world.broker.publicationCount
            try await world.send("gw/bridge/request/devices", "{}")
            let list = try await world.next(on: "gw/bridge/response/devices", since: mark).payloadText
            #expect(!list.contains(#""name":"strap""#))
        }
    }
}
