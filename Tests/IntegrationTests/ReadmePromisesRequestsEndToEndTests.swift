import DBus
import Foundation
import TestWorld
import Testing

/// `bridge/request/remove`, devices found by `match: {name_prefix}`, and `write: without_response`.
@Suite(.serialized, .timeLimit(.minutes(3)))
struct ReadmePromisesRequestsEndToEndTests {
    static let lockService = "0000fff0-0000-1000-8000-00805f9b34fb"
    static let lockControl = "0000fff1-0000-1000-8000-00805f9b34fb"
    static let lockAddress = "D0:0D:10:C4:00:01"

    @Test func removeDeletesTheDeviceFromBlueZ() async throws {
        let world = try await CentralWorld(scenario: "demo.yaml", config: Configs.strapAndLock)
        try await world.run { world in
            try await world.observer.waitForMessage(on: "gattway/lock/availability") { $0 == "online" }
            let removals = try await world.control.connection.signals(
                matching: DBusMatchRule(
                    interface: "org.freedesktop.DBus.ObjectManager", member: "InterfacesRemoved"))
            try await world.publish("gattway/bridge/request/remove", #"{"device":"lock","transaction":"r"}"#)
            let response = try await world.observer.waitForMessage(on: "gattway/bridge/response/remove")
            #expect(response.payload == #"{"ok":true,"device":"lock","transaction":"r"}"#, "\(response)")
            // bluetoothd dropped the device object: Gattway called Adapter1.RemoveDevice for it.
            let lockPath = SimulatorControl.devicePath(Self.lockAddress)
            try await withDeadline(.seconds(20), "InterfacesRemoved for the lock") {
                for await signal in removals where signal.arguments.first?.objectPath == lockPath {
                    if signal.arguments.dropFirst().first?.stringArray?.contains("org.bluez.Device1") == true { return }
                }
            }
            try await world.observer.waitForMessage(on: "gattway/lock/availability") { $0 == "offline" }
            // The lock is still configured and still advertising: heard again, it is tracked and connected anew.
            try await world.observer.waitForMessage(on: "gattway/lock/availability", skipping: 2) { $0 == "online" }
        }
    }

    @Test func namePrefixMatchesAnAdvertisedName() async throws {
        let config = """
            bluetooth: { adapter: hci0, request_timeout: 5, connect_timeout: 5 }
            devices:
              - name: front-door
                match: { name_prefix: "Gattway L" }
                characteristics:
                  - { name: control, service: "\(Self.lockService)", uuid: "\(Self.lockControl)", write: with_response, codec: utf8 }
            """
        let world = try await CentralWorld(scenario: "demo.yaml", config: config)
        try await world.run { world in
            let advert = try await world.observer.waitForMessage(on: "gattway/front-door/advert")
            #expect(advert.payload.contains(#""address":"D0:0D:10:C4:00:01""#), "\(advert)")
            #expect(advert.payload.contains(#""name":"Gattway Lock""#))
            try await world.observer.waitForMessage(on: "gattway/front-door/availability") { $0 == "online" }
            try await world.publish("gattway/front-door/control/set", "lock")
            try await world.observer.waitForMessage(on: "gattway/front-door/control/set/result") {
                $0 == #"{"ok":true}"#
            }
            #expect(try await world.control.writes(Self.lockAddress, uuid: Self.lockControl).last == Array("lock".utf8))
        }
    }

    @Test func withoutResponseWritesAsAWriteCommand() async throws {
        let config = """
            bluetooth: { adapter: hci0, request_timeout: 5, connect_timeout: 5 }
            devices:
              - name: lock
                address: "\(Self.lockAddress)"
                characteristics:
                  - { name: control, service: "\(Self.lockService)", uuid: "\(Self.lockControl)", write: without_response, codec: utf8 }
            """
        let world = try await CentralWorld(scenario: "demo.yaml", config: config)
        try await world.run { world in
            try await world.observer.waitForMessage(on: "gattway/lock/availability") { $0 == "online" }
            try await world.publish("gattway/lock/control/set", #"{"value":"unlock","transaction":5}"#)
            try await world.observer.waitForMessage(on: "gattway/lock/control/set/result") {
                $0 == #"{"ok":true,"transaction":5}"#
            }
            let writes = try await world.control.writeProcedures(Self.lockAddress, uuid: Self.lockControl)
            #expect(writes.map(\.procedure) == ["command"], "\(writes)")
            #expect(writes.map(\.value) == [Array("unlock".utf8)])
        }
    }
}
