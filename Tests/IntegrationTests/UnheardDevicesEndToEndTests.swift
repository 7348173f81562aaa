import DBus
import Foundation
import TestWorld
import Testing

/// A device found by a `match` rule that is no longer heard is let go after `bluetooth.unheard_timeout`: it does
/// not hold a tracking slot for good, and a passive one is published offline.
@Suite(.serialized, .timeLimit(.minutes(3)))
struct UnheardDevicesEndToEndTests {
    static let config = """
        bluetooth:
          adapter: hci0
          unheard_timeout: 2
        devices:
          - name: lock
            address: "D0:0D:10:C4:00:01"
            connect: on_demand
          - name: thermometer
            match: { service: "FCD2" }
            connect: never
        """

    @Test func aMatchedDeviceNoLongerHeardIsReleasedAndAConfiguredAddressStays() async throws {
        let world = try await CentralWorld(scenario: "demo.yaml", config: Self.config)
        try await world.run { world in
            try await world.observer.waitForMessage(on: "gattway/thermometer/availability") { $0 == "online" }
            try await world.observer.waitForMessage(on: "gattway/bridge/devices") {
                $0.contains(#""name":"thermometer""#) && $0.contains(#""name":"lock""#)
            }
            // Only lists published from here on: an early one (before anything was tracked) is empty too.
            let listsSoFar = world.observer.messages(on: "gattway/bridge/devices").count
            try await world.control.call("RemovePeripheral", [.string("A4:C1:38:00:00:01")])
            try await world.control.call("RemovePeripheral", [.string("D0:0D:10:C4:00:01")])
            try await world.observer.waitForMessage(on: "gattway/thermometer/availability") { $0 == "offline" }
            let devices = try await world.observer.waitForMessage(on: "gattway/bridge/devices", skipping: listsSoFar) {
                !$0.contains(#""name":"thermometer""#)
            }
            // The lock is configured by address: it stays tracked, waiting to be heard again.
            #expect(devices.payload.contains(#""name":"lock""#))
        }
    }
}
