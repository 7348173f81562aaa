import DBus
import Foundation
import TestWorld
import Testing

/// `bridge/request/pair` and `unpair`: the daemon pairs a tracked device over MQTT, answering bluetoothd with the
/// passkey from the request.
@Suite(.serialized, .timeLimit(.minutes(3)))
struct PairingRequestEndToEndTests {
    static let config = """
        bluetooth:
          adapter: hci0
          request_timeout: 5
          connect_timeout: 5
        devices:
          - name: keypad
            address: "\(CommandLinePairingEndToEndTests.passkey)"
            connect: on_demand
            characteristics:
              - { name: battery, service: "180F", uuid: "2A19", read: true, codec: uint8 }
          - name: stubborn
            address: "\(CommandLinePairingEndToEndTests.refusing)"
            connect: on_demand
        """

    private func response(_ world: CentralWorld, _ verb: String, transaction: String) async throws -> String {
        try await world.observer.waitForMessage(on: "gattway/bridge/response/\(verb)") {
            $0.contains(#""transaction":"\#(transaction)""#)
        }.payload
    }

    private func paired(_ world: CentralWorld, _ address: String) async throws -> Bool {
        let path = "/org/bluez/hci0/dev_" + address.replacingOccurrences(of: ":", with: "_")
        let reply = try await world.control.connection.call(
            destination: "org.bluez", path: path, interface: "org.freedesktop.DBus.Properties", method: "Get",
            arguments: [.string("org.bluez.Device1"), .string("Paired")], timeout: .seconds(10))
        return reply.first?.bool ?? false
    }

    @Test func aPasskeyFromTheRequestPairsAndUnpairForgetsTheKeys() async throws {
        let world = try await CentralWorld(
            scenario: try CommandLinePairingEndToEndTests.scenario(), config: Self.config)
        try await world.run { world in
            try await world.observer.waitForMessage(on: "gattway/keypad/advert")
            try await world.publish(
                "gattway/bridge/request/pair", #"{"device":"keypad","passkey":1234,"transaction":"wrong"}"#)
            let refused = try await response(world, "pair", transaction: "wrong")
            #expect(refused.hasPrefix(#"{"ok":false,"error":"org.bluez.Error.Authentication"#), "\(refused)")
            #expect(try await paired(world, CommandLinePairingEndToEndTests.passkey) == false)

            try await world.publish(
                "gattway/bridge/request/pair", #"{"device":"keypad","passkey":4242,"transaction":"right"}"#)
            let accepted = try await response(world, "pair", transaction: "right")
            #expect(accepted == #"{"ok":true,"device":"keypad","transaction":"right"}"#)
            #expect(try await paired(world, CommandLinePairingEndToEndTests.passkey))

            try await world.publish("gattway/bridge/request/unpair", #"{"device":"keypad","transaction":"forget"}"#)
            let forgotten = try await response(world, "unpair", transaction: "forget")
            #expect(forgotten == #"{"ok":true,"device":"keypad","transaction":"forget"}"#)
            // bluetoothd forgot the device with its keys; its next advertisement makes it known again, unpaired.
            try await withDeadline(.seconds(20), "the keypad to be known again, unpaired") {
                while (try? await paired(world, CommandLinePairingEndToEndTests.passkey)) != false {
                    try await Task.sleep(for: .milliseconds(50))
                }
            }
        }
    }

    @Test func badPasskeysAndRefusedPairingsGetErrorResults() async throws {
        let world = try await CentralWorld(
            scenario: try CommandLinePairingEndToEndTests.scenario(), config: Self.config)
        try await world.run { world in
            try await world.observer.waitForMessage(on: "gattway/stubborn/advert")
            try await world.observer.waitForMessage(on: "gattway/keypad/advert")
            try await world.publish(
                "gattway/bridge/request/pair", #"{"device":"keypad","passkey":1e9,"transaction":"big"}"#)
            let big = try await response(world, "pair", transaction: "big")
            #expect(big.contains("gattway.Error.InvalidRequest"), "\(big)")
            try await world.publish("gattway/bridge/request/pair", #"{"device":"stubborn","transaction":"no"}"#)
            #expect(
                try await response(world, "pair", transaction: "no").contains("org.bluez.Error.AuthenticationFailed"))
            try await world.publish("gattway/bridge/request/unpair", #"{"device":"stubborn","transaction":"u"}"#)
            #expect(try await response(world, "unpair", transaction: "u").contains("gattway.Error.NotPaired"))
        }
    }

    static func pairBeforeUse(passkey: Int) -> String {
        """
        bluetooth:
          adapter: hci0
          request_timeout: 5
          connect_timeout: 5
          reconnect: { initial: 0.5, max: 1 }
        devices:
          - name: keypad
            address: "\(CommandLinePairingEndToEndTests.passkey)"
            pair: true
            passkey: \(passkey)
            characteristics:
              - { name: battery, service: "180F", uuid: "2A19", read: true, codec: uint8 }
        """
    }

    @Test func aDeviceConfiguredToPairIsPairedBeforeUse() async throws {
        let world = try await CentralWorld(
            scenario: try CommandLinePairingEndToEndTests.scenario(), config: Self.pairBeforeUse(passkey: 4242))
        try await world.run { world in
            try await world.observer.waitForMessage(on: "gattway/keypad/availability") { $0 == "online" }
            #expect(try await paired(world, CommandLinePairingEndToEndTests.passkey))
            try await world.publish("gattway/keypad/battery/get", "")
            try await world.observer.waitForMessage(on: "gattway/keypad/battery") { $0 == "90" }
        }
    }

    @Test func aWrongConfiguredPasskeyKeepsTheDeviceOfflineAndSaysWhy() async throws {
        let world = try await CentralWorld(
            scenario: try CommandLinePairingEndToEndTests.scenario(), config: Self.pairBeforeUse(passkey: 1))
        try await world.run { world in
            let event = try await world.observer.waitForMessage(on: "gattway/bridge/event") {
                $0.contains("device_connect_failed")
            }
            #expect(event.payload.contains("org.bluez.Error.Authentication"), "\(event.payload)")
            #expect(try await paired(world, CommandLinePairingEndToEndTests.passkey) == false)
            #expect(!world.observer.messages(on: "gattway/keypad/availability").contains { $0.payload == "online" })
        }
    }
}
