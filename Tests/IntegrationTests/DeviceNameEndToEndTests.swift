import DBus
import Foundation
import TestWorld
import Testing

/// A connected device's own name (GAP Device Name, 0x2A00) is read and shown beside what it advertises.
@Suite(.serialized, .timeLimit(.minutes(3)))
struct DeviceNameEndToEndTests {
    @Test func bridgeDevicesShowsTheNameTheDeviceGivesItself() async throws {
        let strap = "C4:7C:8D:6A:3E:11"
        let world = try await CentralWorld(
            scenario: "demo.yaml", config: Configs.strapAndLock,
            prepare: {
                try await $0.call("SetValue", [.string(strap), .string("2a00"), .bytes(Array("Ana's strap".utf8))])
            })
        try await world.run { world in
            let devices = try await world.observer.waitForMessage(on: "gattway/bridge/devices") {
                $0.contains(#""device_name":"Ana's strap""#)
            }
            // The advertisement still says what the strap broadcasts.
            let advert = try await world.observer.waitForMessage(on: "gattway/chest-strap/advert")
            #expect(advert.payload.contains(#""name":"Polar H10 6A3E11""#))
            // The lock has no GAP service in this world: no name is made up for it.
            #expect(devices.payload.contains(#""name":"lock""#))
            #expect(devices.payload.components(separatedBy: "device_name").count == 2)
        }
    }
}
