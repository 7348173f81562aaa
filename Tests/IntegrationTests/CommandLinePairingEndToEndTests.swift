import DBus
import Foundation
import TestWorld
import Testing

/// `gattway pair|unpair` against the simulator's pairing methods (Tests/BlueZSimulator/bluezsim/agent.py):
/// Gattway's Agent1 answers bluetoothd's passkey and confirmation requests.
@Suite(.serialized, .timeLimit(.minutes(5))) struct CommandLinePairingEndToEndTests {
    static let justWorks = "00:AA:01:00:00:01"
    static let passkey = "00:AA:01:00:00:02"
    static let confirm = "00:AA:01:00:00:03"
    static let refusing = "00:AA:01:00:00:04"

    /// One peripheral per pairing method, each with a readable battery level.
    static func scenario() throws -> String {
        func peripheral(_ address: String, _ name: String, _ pairing: String) -> String {
            """
              - address: \(address)
                address_type: public
                connectable: true
                interval_ms: 100
                rssi: -50
                advert: {flags: 0x06, name: \(name)}
                pairing: \(pairing)
                gatt:
                  - uuid: "180f"
                    characteristics:
                      - {uuid: "2a19", flags: [read], value: [90]}
            """
        }
        let yaml =
            "description: One peripheral per pairing method.\nperipherals:\n"
            + [
                peripheral(justWorks, "Just Works", "{method: just-works}"),
                peripheral(passkey, "Passkey", "{method: passkey, passkey: 4242}"),
                peripheral(confirm, "Confirm", "{method: confirm, passkey: 5555}"),
                peripheral(refusing, "Refusing", "{method: just-works, fail: AuthenticationFailed}"),
            ].joined(separator: "\n") + "\n"
        let path = try makeTemporaryDirectory("gattway-pairing") + "/pairing.yaml"
        try yaml.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    static func world() async throws -> CommandLineWorld {
        try await CommandLineWorld.start(scenario: try scenario())
    }

    @Test func justWorksPairsAndDisconnectsAfter() async throws {
        try await Self.world().run { world in
            let result = try await world.gattway(["pair", Self.justWorks])
            #expect(result.status == 0, "\(result.stderr)")
            #expect(result.stdout == "paired with \(Self.justWorks)\n")
            #expect(try await Self.device(Self.justWorks, "Paired", world) == true)
            #expect(try await Self.device(Self.justWorks, "Connected", world) == false)
        }
    }

    @Test func passkeyEntryUsesThePasskeyFromTheCommandLine() async throws {
        try await Self.world().run { world in
            let result = try await world.gattway(["pair", "Passkey", "--passkey", "4242", "--json"])
            #expect(result.status == 0, "\(result.stderr)")
            let document = try jsonObject(result.stdout)
            #expect(document["device"] as? String == Self.passkey)
            #expect(document["paired"] as? Bool == true)
            #expect(try await Self.device(Self.passkey, "Paired", world) == true)
        }
    }

    @Test func aWrongPasskeyFailsWithTheBlueZError() async throws {
        try await Self.world().run { world in
            let wrong = try await world.gattway(["pair", Self.passkey, "--passkey", "1111"])
            #expect(wrong.status == 1)
            #expect(
                wrong.stderr.hasSuffix("gattway: org.bluez.Error.AuthenticationFailed: Authentication Failed\n"),
                "\(wrong.stderr)")
            let none = try await world.gattway(["pair", Self.passkey])
            #expect(none.status == 1)
            #expect(none.stderr.contains("give it with --passkey"), "\(none.stderr)")
            #expect(none.stderr.hasSuffix("gattway: org.bluez.Error.AuthenticationRejected: Authentication Rejected\n"))
            #expect(try await Self.device(Self.passkey, "Paired", world) == false)
        }
    }

    @Test func numericConfirmationIsCheckedAgainstThePasskey() async throws {
        try await Self.world().run { world in
            let mismatch = try await world.gattway(["pair", Self.confirm, "--passkey", "1234"])
            #expect(mismatch.status == 1)
            #expect(mismatch.stderr.contains("the device shows passkey 005555, not 001234"), "\(mismatch.stderr)")
            #expect(mismatch.stderr.hasSuffix("org.bluez.Error.AuthenticationRejected: Authentication Rejected\n"))
            #expect(try await Self.device(Self.confirm, "Paired", world) == false)
            let match = try await world.gattway(["pair", Self.confirm, "--passkey", "5555"])
            #expect(match.status == 0, "\(match.stderr)")
            #expect(try await Self.device(Self.confirm, "Paired", world) == true)
        }
    }

    @Test func numericConfirmationWithoutAPasskeyIsShownAndAccepted() async throws {
        try await Self.world().run { world in
            let result = try await world.gattway(["pair", "Confirm"])
            #expect(result.status == 0, "\(result.stderr)")
            #expect(result.stderr.contains("confirming passkey 005555"), "\(result.stderr)")
            #expect(try await Self.device(Self.confirm, "Paired", world) == true)
        }
    }

    @Test func aDeviceThatRefusesPairingGivesANonZeroExitAndTheErrorName() async throws {
        try await Self.world().run { world in
            let result = try await world.gattway(["pair", Self.refusing])
            #expect(result.status == 1)
            #expect(result.stderr == "gattway: org.bluez.Error.AuthenticationFailed: Authentication Failed\n")
        }
    }

    @Test func unpairRemovesThePairedDeviceAndRefusesAnUnpairedOne() async throws {
        try await Self.world().run { world in
            #expect(try await world.gattway(["pair", Self.justWorks]).status == 0)
            let result = try await world.gattway(["unpair", Self.justWorks, "--json"])
            #expect(result.status == 0, "\(result.stderr)")
            let document = try jsonObject(result.stdout)
            #expect(document["action"] as? String == "removed")
            #expect(document["paired"] as? Bool == false)
            let objects = try await world.control.connection.call(
                destination: "org.bluez", path: "/", interface: "org.freedesktop.DBus.ObjectManager",
                method: "GetManagedObjects")
            let paths = objects.first?.dictionaryEntries?.compactMap { $0.key.objectPath } ?? []
            #expect(!paths.contains(Self.path(Self.justWorks)))
            _ = try await world.gattway(["scan", "--duration", "1"])
            let again = try await world.gattway(["unpair", Self.justWorks])
            #expect(again.status == 1)
            #expect(again.stderr == "gattway: \(Self.justWorks) is not paired and no pairing is in progress\n")
        }
    }

    // MARK: - Helpers

    static func path(_ address: String) -> String {
        "/org/bluez/hci0/dev_" + address.replacingOccurrences(of: ":", with: "_")
    }

    static func device(_ address: String, _ property: String, _ world: CommandLineWorld) async throws -> Bool {
        let reply = try await world.control.connection.call(
            destination: "org.bluez", path: path(address), interface: "org.freedesktop.DBus.Properties",
            method: "Get", arguments: [.string("org.bluez.Device1"), .string(property)])
        guard let value = reply.first?.bool else { throw TestWorldError("Device1 gave no boolean: \(reply)") }
        return value
    }
}
