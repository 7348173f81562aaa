import DBus
import Foundation
import Logging
import TestWorld
import Testing

/// A remote central pairs with the local peripheral to read a characteristic that needs encryption: bluetoothd asks
/// the default agent (src/device.c new_auth()), which Gattway registers for such characteristics, and the pairing
/// prompt reaches `gattway/bridge/event`.
@Suite(.serialized, .timeLimit(.minutes(3)))
struct PeripheralPairingEndToEndTests {
    static let secret = "6e400005-b5a3-f393-e0a9-e50e24dcca9e"
    static let insufficientAuthentication: UInt8 = 0x05

    static let secretCharacteristic = """
                - uuid: "\(secret)"
                  name: secret
                  flags: [encrypt-read]
                  codec: utf8
                  initial_value: s3cret
        """

    static func world(passkey: Int? = nil) async throws -> PeripheralWorld {
        try await PeripheralWorld(
            extraCharacteristics: secretCharacteristic, extraPeripheral: passkey.map { "passkey: \($0)" } ?? "")
    }

    /// The ATT status and value of one read of the secret characteristic by the remote central.
    static func readSecret(_ world: PeripheralWorld) async throws -> (status: UInt8, value: String) {
        let reply = try await world.centralCall(
            "ReadValue", [.string(PeripheralWorld.central), .string(secret), .uint16(0)])
        return (reply.first?.byte ?? 0xFF, String(decoding: reply.last?.bytes ?? [], as: UTF8.self))
    }

    /// Connected, with the application registered and Gattway's agent the default one.
    static func ready(_ world: PeripheralWorld) async throws {
        try await world.waitForApplication()
        try await world.control.waitForCounter("agents.default_requested", atLeast: 1)
        try await world.connectCentral()
    }

    static func pair(_ world: PeripheralWorld, _ method: String, passkey: UInt32 = 123456) async throws {
        _ = try await world.centralCall(
            "PairCentral",
            [
                .string(PeripheralWorld.central), .string(method),
                .stringVariantDictionary(["passkey": .uint32(passkey)]),
            ])
    }

    /// Every pairing_prompt event has the documented shape.
    static func expectMatchesSchema(_ events: [MQTTObserver.Message]) async throws {
        let problems = try await PayloadSchemas.problems(
            events.map { ($0.topic, "bridge-event.schema.json", $0.payload) })
        #expect(problems.isEmpty, "\(problems)")
    }

    @Test func justWorksPairingLetsTheCentralReadAnEncryptedCharacteristic() async throws {
        try await Self.world().run { world in
            try await Self.ready(world)
            let before = try await Self.readSecret(world)
            #expect(before.status == Self.insufficientAuthentication)
            try await Self.pair(world, "just-works")
            let event = try await world.observer.waitForMessage(on: "gattway/bridge/event") {
                $0.contains("pairing_prompt") && $0.contains(PeripheralWorld.central)
            }
            let after = try await Self.readSecret(world)
            #expect(after.status == 0)
            #expect(after.value == "s3cret")
            try await Self.expectMatchesSchema([event])
        }
    }

    @Test func withAPasskeyTheEventCarriesItAndOnlyTheMatchingNumberIsConfirmed() async throws {
        try await Self.world(passkey: 42042).run { world in
            try await Self.ready(world)
            // Just Works proves no passkey, and a different number is not the configured one.
            let justWorks = await #expect(throws: DBusError.self) { try await Self.pair(world, "just-works") }
            #expect(justWorks?.name == "org.bluez.Error.AuthenticationRejected")
            let wrong = await #expect(throws: DBusError.self) { try await Self.pair(world, "confirm", passkey: 42043) }
            #expect(wrong?.name == "org.bluez.Error.AuthenticationRejected")
            #expect(try await Self.readSecret(world).status == Self.insufficientAuthentication)
            // bluetoothd displays a passkey for the person at the central to type: it is published.
            try await Self.pair(world, "display", passkey: 42042)
            let shown = try await world.observer.waitForMessage(on: "gattway/bridge/event") {
                $0.contains("\"passkey\":\"042042\"") && $0.contains("enter passkey")
            }
            #expect(shown.payload.contains(PeripheralWorld.central))
            let after = try await Self.readSecret(world)
            #expect(after.status == 0)
            #expect(after.value == "s3cret")
            try await Self.expectMatchesSchema([shown])
        }
    }

    @Test func numericComparisonWithTheConfiguredPasskeyIsAccepted() async throws {
        try await Self.world(passkey: 42042).run { world in
            try await Self.ready(world)
            try await Self.pair(world, "confirm", passkey: 42042)
            let confirmed = try await world.observer.waitForMessage(on: "gattway/bridge/event") {
                $0.contains("confirmed passkey 042042")
            }
            #expect(try await Self.readSecret(world).status == 0)
            try await Self.expectMatchesSchema([confirmed])
        }
    }

    /// Only bluetoothd may call the agent: another local client could otherwise approve a pairing or learn the
    /// passkey by asking to compare numbers.
    @Test func aClientOtherThanBluetoothdIsRefusedByTheAgent() async throws {
        try await Self.world(passkey: 42042).run { world in
            try await Self.ready(world)
            let json = try await world.centralCall("GetAgents", []).first?.string ?? "[]"
            let agents = try #require(try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [[String: Any]])
            let agent = try #require(agents.first)
            #expect(agent["default"] as? Bool == true)
            #expect(agent["path"] as? String == "/org/gattway/peripheral/agent")
            let owner = try #require(agent["owner"] as? String)
            let stranger = try await DBusConnection.connect(
                to: .address(world.simulator.busAddress), name: "test-stranger", logger: Logger(label: "test"))
            let device = DBusValue.objectPath("/org/bluez/hci0/dev_11_22_33_44_55_66")
            for (method, arguments) in [
                ("RequestAuthorization", [device]), ("RequestConfirmation", [device, .uint32(42042)]),
                ("RequestPasskey", [device]),
            ] {
                let error = await #expect(throws: DBusError.self, "\(method)") {
                    _ = try await stranger.call(
                        destination: owner, path: "/org/gattway/peripheral/agent", interface: "org.bluez.Agent1",
                        method: method, arguments: arguments, timeout: .seconds(10))
                }
                #expect(error?.name == DBusError.accessDenied, "\(method)")
            }
            await stranger.close()
            #expect(try await Self.readSecret(world).status == Self.insufficientAuthentication)
        }
    }

    /// A restarted bluetoothd knows no agents: Gattway's is registered, and made the default, again.
    @Test func theAgentIsTheDefaultAgainAfterBluetoothdRestarts() async throws {
        try await Self.world().run { world in
            try await world.waitForApplication()
            try await world.control.waitForCounter("agents.default_requested", atLeast: 1)
            try await world.control.restartBluetoothd(downSeconds: 0.2)
            try await world.control.waitForCounter("agents.default_requested", atLeast: 2)
            try await world.waitForApplication()
            try await world.connectCentral()
            try await Self.pair(world, "just-works")
            #expect(try await Self.readSecret(world).value == "s3cret")
        }
    }
}
