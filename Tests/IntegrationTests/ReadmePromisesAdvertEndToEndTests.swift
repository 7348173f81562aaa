import Foundation
import Testing
import TestWorld

/// `<device>/advert` is change-driven (an advert heard again unchanged publishes nothing) and rate-limited (changes
/// within `bluetooth.advert_min_interval` of the last publication are held back, and only the newest is published).
@Suite(.serialized, .timeLimit(.minutes(3)))
struct ReadmePromisesAdvertEndToEndTests {
    static let lock = "D0:0D:10:C4:00:01"
    static let config = """
        bluetooth: { adapter: hci0, advert_min_interval: 8 }
        devices:
          - name: lock
            address: "\(lock)"
            connect: never
        """

    private static func rssi(_ payload: String) -> Int? {
        let json = try? JSONSerialization.jsonObject(with: Data(payload.utf8)) as? [String: Any]
        return json?["rssi"] as? Int
    }

    @Test func advertsArePublishedOnChangeAndAtMostOncePerInterval() async throws {
        let world = try await CentralWorld(scenario: "demo.yaml", config: Self.config)
        try await world.run { world in
            // The lock advertises every 250 ms at a steady -64 dBm.
            try await world.observer.waitForMessage(on: "gattway/lock/advert") { Self.rssi($0) == -64 }
            try await world.control.advertise(Self.lock, rssi: -50)
            try await world.observer.waitForMessage(on: "gattway/lock/advert") { Self.rssi($0) == -50 }
            let published = world.observer.messages(on: "gattway/lock/advert").count
            // Three changes that bluetoothd hears one after the other, well within the 8 s interval.
            for rssi: Int16 in [-51, -52, -53] { try await world.control.advertise(Self.lock, rssi: rssi) }
            try await world.observer.waitForMessage(on: "gattway/lock/advert", skipping: published) { Self.rssi($0) == -53 }
            let held = world.observer.messages(on: "gattway/lock/advert").dropFirst(published).map { Self.rssi($0.payload) }
            #expect(held == [-53], "changes within the interval must collapse into the newest: \(held)")
            // Every publication so far differs from the one before it: an unchanged advert (the lock repeats its
            // advert four times a second) publishes nothing.
            let all = world.observer.messages(on: "gattway/lock/advert").map(\.payload)
            #expect(zip(all, all.dropFirst()).allSatisfy { $0 != $1 }, "\(all)")
            #expect(all.count == published + 1, "\(all)")
        }
    }
}
