import Foundation
import TestWorld
import Testing

/// The fleet's test world: one simulated bluetoothd with three adapters (scenarios/fleet.yaml), the lock heard by
/// each with its own signal, moved at run time through `SimulatorRadio`; a gateway on one adapter reaches the
/// peripheral that every adapter hears, and holds its one link.
@Suite(.serialized, .timeLimit(.minutes(3)))
struct FleetRadioEndToEndTests {
    static let lock = "D0:0D:10:C4:00:01"

    @Test func eachAdapterHearsTheLockWithItsOwnSignalAndATestMovesOne() async throws {
        let simulator = try await BlueZSimulatorProcess(scenario: "fleet.yaml")
        let radio = try await SimulatorRadio.connect(to: simulator)
        do {
            try await radio.startDiscovery(adapters: ["hci0", "hci1", "hci2"])
            try await radio.waitForHeardRSSI(device: Self.lock, adapter: "hci0", rssi: -55)
            try await radio.waitForHeardRSSI(device: Self.lock, adapter: "hci1", rssi: -70)
            try await radio.waitForHeardRSSI(device: Self.lock, adapter: "hci2", rssi: -85)

            try await radio.setRSSI(device: Self.lock, adapter: "hci2", rssi: -40)
            try await radio.waitForHeardRSSI(device: Self.lock, adapter: "hci2", rssi: -40)
            #expect(try await radio.signals(device: Self.lock) == ["hci0": -55, "hci1": -70, "hci2": -40])
            #expect(try await radio.heardRSSI(device: Self.lock, adapter: "hci0") == -55)
            #expect(try await radio.linkAdapter(device: Self.lock) == nil)
        } catch {
            await radio.close()
            await simulator.stop()
            throw error
        }
        await radio.close()
        await simulator.stop()
    }

    @Test func aGatewayOnTheThirdAdapterHoldsTheLocksLinkUntilItsAdapterLosesTheLock() async throws {
        let config = """
            bluetooth:
              adapter: hci2
              connect_timeout: 5
            devices:
              - name: lock
                address: "\(Self.lock)"
                connect: always
                characteristics:
                  - { name: state, service: "0000fff0-0000-1000-8000-00805f9b34fb", uuid: "0000fff2-0000-1000-8000-00805f9b34fb", read: true, notify: true, codec: utf8 }
            """
        let world = try await CentralWorld(scenario: "fleet.yaml", config: config)
        let radio = try await SimulatorRadio.connect(to: world.simulator)
        do {
            try await world.run { world in
                try await world.observer.waitForMessage(on: "gattway/lock/availability") { $0 == "online" }
                #expect(try await radio.linkAdapter(device: Self.lock) == "hci2")
                #expect(try await radio.isConnected(device: Self.lock, adapter: "hci2"))
                #expect(try await !radio.isConnected(device: Self.lock, adapter: "hci0"))
                // The gateway's adapter leaves the lock's range: the link drops as a supervision timeout would.
                let availability = "gattway/lock/availability"
                let beforeLoss = world.observer.messages(on: availability).count
                try await radio.setHeard(device: Self.lock, adapter: "hci2", heard: false)
                try await world.observer.waitForMessage(on: availability, skipping: beforeLoss) { $0 == "offline" }
                #expect(try await radio.linkAdapter(device: Self.lock) == nil)
                // Back in range, the gateway connects again through hci2.
                let beforeReturn = world.observer.messages(on: availability).count
                try await radio.setHeard(device: Self.lock, adapter: "hci2", heard: true)
                try await world.observer.waitForMessage(on: availability, skipping: beforeReturn, timeout: .seconds(60))
                {
                    $0 == "online"
                }
                #expect(try await radio.linkAdapter(device: Self.lock) == "hci2")
                // Its adapter powered off (as when its host goes away): the link drops.
                let beforePowerOff = world.observer.messages(on: availability).count
                try await radio.setPowered(adapter: "hci2", on: false)
                try await world.observer.waitForMessage(on: availability, skipping: beforePowerOff) { $0 == "offline" }
                #expect(try await radio.linkAdapter(device: Self.lock) == nil)
                #expect(try await !radio.isConnected(device: Self.lock, adapter: "hci2"))
            }
        } catch {
            await radio.close()
            throw error
        }
        await radio.close()
    }
}
