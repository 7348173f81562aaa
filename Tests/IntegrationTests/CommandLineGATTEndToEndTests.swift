import DBus
import Foundation
import TestWorld
import Testing

/// `gattway services|read|write|notify` against the simulator's heart-rate strap and lock.
@Suite(.serialized, .timeLimit(.minutes(5))) struct CommandLineGATTEndToEndTests {
    static let strap = "C4:7C:8D:6A:3E:11"
    static let lock = "D0:0D:10:C4:00:01"
    static let lockControl = "0000fff1-0000-1000-8000-00805f9b34fb"
    static let lockState = "0000fff2-0000-1000-8000-00805f9b34fb"

    @Test func servicesPrintsTheGATTTreeWithNamesAndFlagsAndDisconnectsAfter() async throws {
        try await CommandLineWorld.start(scenario: "demo.yaml").run { world in
            let result = try await world.gattway(["services", Self.strap])
            #expect(result.status == 0, "\(result.stderr)")
            let lines = result.stdout.split(separator: "\n").map(String.init)
            #expect(lines.contains("service 180d Heart Rate"), "\(result.stdout)")
            #expect(lines.contains("  characteristic 2a37 Heart Rate Measurement  [notify]"))
            #expect(lines.contains("  characteristic 2a19 Battery Level  [read, notify]"))
            #expect(lines.contains("    descriptor 2902 Client Characteristic Configuration"))
            #expect(try await Self.isConnected(Self.strap, world) == false)
        }
    }

    @Test func servicesJSONListsServicesCharacteristicsAndDescriptors() async throws {
        try await CommandLineWorld.start(scenario: "demo.yaml").run { world in
            let result = try await world.gattway(["services", "Gattway Lock", "--json"])
            #expect(result.status == 0, "\(result.stderr)")
            let document = try jsonObject(result.stdout)
            #expect(document["device"] as? String == Self.lock)
            let services = try #require(document["services"] as? [[String: Any]])
            let lockService = try #require(
                services.first { $0["uuid"] as? String == "0000fff0-0000-1000-8000-00805f9b34fb" })
            #expect(lockService["primary"] as? Bool == true)
            let characteristics = try #require(lockService["characteristics"] as? [[String: Any]])
            #expect(characteristics.map { $0["uuid"] as? String } == [Self.lockControl, Self.lockState])
            #expect(characteristics[0]["flags"] as? [String] == ["write"])
            #expect(characteristics[1]["flags"] as? [String] == ["read", "notify"])
            let descriptors = try #require(characteristics[1]["descriptors"] as? [[String: Any]])
            #expect(descriptors.first?["name"] as? String == "Client Characteristic Configuration")
            #expect(services.contains { $0["name"] as? String == "Generic Access" } == false)  // the lock has none
        }
    }

    @Test func readPrintsTheSimulatorsValueInTheCodec() async throws {
        try await CommandLineWorld.start(scenario: "demo.yaml").run { world in
            let battery = try await world.gattway(["read", Self.strap, "180f/2a19", "--codec", "battery_level"])
            #expect(battery.status == 0, "\(battery.stderr)")
            #expect(battery.stdout == "100\n")
            let state = try await world.gattway(["read", "Gattway Lock", "fff2", "--codec", "utf8"])
            #expect(state.status == 0, "\(state.stderr)")
            #expect(state.stdout == "locked\n")
            let hex = try await world.gattway(["read", Self.strap, "2a01"])
            #expect(hex.stdout == "4103\n", "\(hex.stderr)")
            #expect(try await Self.isConnected(Self.strap, world) == false)
        }
    }

    @Test func readJSONCarriesTheDecodedValueAndTheBytes() async throws {
        try await CommandLineWorld.start(scenario: "demo.yaml").run { world in
            try await world.control.call("SetValue", [.string(Self.strap), .string("2a19"), .bytes([57])])
            let result = try await world.gattway(["read", Self.strap, "2a19", "--codec", "battery_level", "--json"])
            #expect(result.status == 0, "\(result.stderr)")
            let document = try jsonObject(result.stdout)
            #expect(document["value"] as? Int == 57)
            #expect(document["hex"] as? String == "39")
            #expect(document["device"] as? String == Self.strap)
            #expect(document["codec"] as? String == "battery_level")
        }
    }

    @Test func writeReachesTheSimulator() async throws {
        try await CommandLineWorld.start(scenario: "demo.yaml").run { world in
            let result = try await world.gattway(["write", Self.lock, "fff1", "unlock", "--codec", "utf8"])
            #expect(result.status == 0, "\(result.stderr)")
            #expect(result.stdout.hasPrefix("wrote 6 bytes (756e6c6f636b)"), "\(result.stdout)")
            let json = try await world.gattway(["write", Self.lock, "fff1", "6c6f636b", "--json"])
            #expect(json.status == 0, "\(json.stderr)")
            let document = try jsonObject(json.stdout)
            #expect(document["ok"] as? Bool == true)
            #expect(document["type"] as? String == "request")
            let writes = try await world.control.writes(Self.lock, uuid: Self.lockControl)
            #expect(writes == [Array("unlock".utf8), Array("lock".utf8)])
            // The lock reflects the last accepted command into its state characteristic.
            let state = try await world.gattway(["read", Self.lock, "fff2", "--codec", "utf8"])
            #expect(state.stdout == "lock\n")
        }
    }

    @Test func writeWithoutResponseIsACommand() async throws {
        try await CommandLineWorld.start(scenario: "demo.yaml").run { world in
            let result = try await world.gattway(["write", Self.strap, "2a39", "01", "--without-response", "--json"])
            #expect(result.status == 0, "\(result.stderr)")
            #expect(try jsonObject(result.stdout)["type"] as? String == "command")
            let writes = try await world.control.writes(Self.strap, uuid: "2a39")
            #expect(writes == [[0x01]])
        }
    }

    @Test func anATTErrorOnWriteExitsNonZeroWithTheBlueZErrorName() async throws {
        try await CommandLineWorld.start(scenario: "demo.yaml").run { world in
            let result = try await world.gattway(["write", Self.lock, "fff1", "jam", "--codec", "utf8"])
            #expect(result.status == 1)
            #expect(result.stdout.isEmpty)
            #expect(result.stderr == "gattway: org.bluez.Error.Failed: Operation failed with ATT error: 0x80\n")
            #expect(try await Self.isConnected(Self.lock, world) == false)
        }
    }

    @Test func anInjectedReadErrorExitsNonZeroWithTheErrorNameAndMessage() async throws {
        try await CommandLineWorld.start(scenario: "demo.yaml").run { world in
            try await world.control.call(
                "InjectError",
                [
                    .string("ReadValue"), .string("org.bluez.Error.NotPermitted"), .string("Not paired"), .uint32(1),
                ])
            let result = try await world.gattway(["read", Self.strap, "2a19", "--json"])
            #expect(result.status == 1)
            #expect(result.stderr == "gattway: org.bluez.Error.NotPermitted: Not paired\n")
            let retry = try await world.gattway(["read", Self.strap, "2a19"])
            #expect(retry.status == 0)
        }
    }

    @Test func anUnknownCharacteristicIsNamedInTheFailure() async throws {
        try await CommandLineWorld.start(scenario: "demo.yaml").run { world in
            let result = try await world.gattway(["read", Self.lock, "fff9"])
            #expect(result.status == 1)
            #expect(result.stderr.contains("has no characteristic fff9"), "\(result.stderr)")
            let absent = try await world.gattway(["read", "AA:BB:CC:DD:EE:FF", "2a19", "--timeout", "1"])
            #expect(absent.status == 1)
            #expect(absent.stderr.contains("timed out after 1 s waiting for AA:BB:CC:DD:EE:FF"), "\(absent.stderr)")
        }
    }

    @Test func notifyPrintsTheNotificationsTheSimulatorSends() async throws {
        try await CommandLineWorld.start(scenario: "demo.yaml").run { world in
            let notify = try world.startGattway(
                ["notify", Self.strap, "2a19", "--count", "2", "--codec", "battery_level", "--json"])
            try await Self.waitUntilSubscribed(Self.strap, "2a19", world, notify)
            try await world.control.notify(Self.strap, uuid: "2a19", [42])
            try await world.control.notify(Self.strap, uuid: "2a19", [43])
            let status = await notify.waitForExit(timeout: .seconds(30))
            await notify.waitForEndOfOutput()
            #expect(status == 0, "\(notify.errorOutput)")
            let values = try notify.outputLines.map { try jsonObject($0) }
            #expect(values.map { $0["value"] as? Int } == [42, 43])
            #expect(values.map { $0["hex"] as? String } == ["2a", "2b"])
            #expect(
                try await world.control.call("IsSubscribed", [.string(Self.strap), .string("2a19")]).first?.bool
                    == false)
        }
    }

    @Test func notifyPrintsOneLinePerValueForPeopleAndStopsOnInterrupt() async throws {
        try await CommandLineWorld.start(scenario: "demo.yaml").run { world in
            let notify = try world.startGattway(["notify", "Gattway Lock", "fff2", "--codec", "utf8"])
            try await Self.waitUntilSubscribed(Self.lock, Self.lockState, world, notify)
            try await world.control.notify(Self.lock, uuid: Self.lockState, Array("unlocked".utf8))
            _ = try await notify.waitForLine(timeout: .seconds(30)) { $0 == "unlocked" }
            notify.send(SIGINT)
            let status = await notify.waitForExit(timeout: .seconds(30))
            #expect(status == 0, "\(notify.errorOutput)")
            #expect(try await Self.isConnected(Self.lock, world) == false)
        }
    }

    // MARK: - Helpers

    /// Whether BlueZ (the simulator) shows the device connected, read from Device1.Connected.
    static func isConnected(_ address: String, _ world: CommandLineWorld) async throws -> Bool {
        let path = "/org/bluez/hci0/dev_" + address.replacingOccurrences(of: ":", with: "_")
        let reply = try await world.control.connection.call(
            destination: "org.bluez", path: path, interface: "org.freedesktop.DBus.Properties", method: "Get",
            arguments: [.string("org.bluez.Device1"), .string("Connected")])
        guard let value = reply.first?.bool else { throw TestWorldError("Device1 gave no boolean: \(reply)") }
        return value
    }

    /// Waits until `gattway notify` has subscribed (the simulator's CCC is on), with a deadline.
    static func waitUntilSubscribed(
        _ address: String, _ uuid: String, _ world: CommandLineWorld, _ process: ChildProcess
    ) async throws {
        let control = world.control
        _ = try await withDeadline(.seconds(60), "gattway notify subscribing (stderr: \(process.errorOutput))") {
            while true {
                let reply = try await control.call("IsSubscribed", [.string(address), .string(uuid)])
                if reply.first?.bool == true { return true }
                try await Task.sleep(for: .milliseconds(50))
            }
        }
    }
}
