import BridgeCore
import BridgeTesting
import Foundation
import MQTTCore
import Testing

@testable import CentralBridge

/// `bluetooth.unheard_timeout` for a passive `match` device whose reports the D-Bus loop's advert path takes: the
/// actor hears of them only when it syncs, so its sweep must count them as heard.
@Suite(.timeLimit(.minutes(1)))
struct UnheardDeviceTests {
    typealias Harness = CentralBridgeHarness

    static func passiveStrap(stateDirectory: String) -> String {
        """
        mqtt: { url: "mqtt://127.0.0.1", base_topic: gw, retain: true }
        bluetooth: { adapter: hci0, unheard_timeout: 10, advert_min_interval: 0.01 }
        state_dir: \(stateDirectory)
        devices:
          - name: strap
            match: { name_prefix: "Polar" }
            connect: never
        """
    }

    @Test func aPassiveDeviceHeardOnTheLoopStaysTrackedAndIsReleasedOnceSilent() async throws {
        let manual = ManualClock()
        let world = try Harness(yaml: Self.passiveStrap, clock: BridgeClock(manual))
        try await world.run {
            world.central.advertise(Harness.strap)
            try await world.waitOnline("strap")
            try #require(
                try await world.advertiseUntilTaken(Harness.strap, rssi: -42),
                "a passive device's report is taken on the loop")

            // 60 s of the bridge's clock, six unheard timeouts, heard every 2 s (a sweep's period): each sweep must
            // find it heard, though only the loop took its reports.
            let mark = world.broker.publicationCount
            for step in 0..<30 {
                let taken = world.central.advertise(Harness.strap, rssi: Int16(-50 - step % 20))
                #expect(taken, "step \(step): the report went to the actor, the device is no longer tracked")
                manual.advance(by: .seconds(2))
                try await Task.sleep(for: .milliseconds(20))  // the sweep the step woke runs
            }
            // A release publishes the device offline (an "online" published again is no release).
            let availability = world.broker.publications[mark...].map(\.message)
                .filter { $0.topic == "gw/strap/availability" }.map(\.payloadText)
            #expect(!availability.contains("offline"), "released while heard: \(availability)")

            // Silent: let go once the timeout passes, and published offline.
            for _ in 0..<8 {
                manual.advance(by: .seconds(2))
                try await Task.sleep(for: .milliseconds(20))
            }
            _ = try await world.next(on: "gw/strap/availability", since: mark) { $0.payloadText == "offline" }
        }
    }
}
