import Foundation
import TestWorld
import Testing

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
            try await world.observer.waitForMessage(on: "gattway/lock/advert", skipping: published) {
                Self.rssi($0) == -53
            }
            let held = world.observer.messages(on: "gattway/lock/advert").dropFirst(published).map {
                Self.rssi($0.payload)
            }
            #expect(held == [-53], "changes within the interval must collapse into the newest: \(held)")
            // Every publication so far differs from the one before it: an unchanged advert (the lock repeats its
            // advert four times a second) publishes nothing.
            let all = world.observer.messages(on: "gattway/lock/advert").map(\.payload)
            #expect(zip(all, all.dropFirst()).allSatisfy { $0 != $1 }, "\(all)")
            #expect(all.count == published + 1, "\(all)")
        }
    }

    /// A heart-rate strap for its once-a-second notifications, the steady lock, and a one-second interval.
    static let quickConfig = """
        bluetooth: { adapter: hci0, advert_min_interval: 1 }
        devices:
          - name: chest-strap
            address: "C4:7C:8D:6A:3E:11"
            characteristics:
              - { name: heart_rate, service: "180D", uuid: "2A37", notify: true, codec: heart_rate_measurement }
          - name: lock
            address: "\(lock)"
            connect: never
        """

    @Test func anAdvertChangeNotShownInThePayloadPublishesNothing() async throws {
        let world = try await CentralWorld(scenario: "demo.yaml", config: Self.quickConfig)
        try await world.run { world in
            try await world.observer.waitForMessage(on: "gattway/lock/advert") { Self.rssi($0) == -64 }
            try await world.observer.waitForMessage(on: "gattway/chest-strap/availability") { $0 == "online" }
            // Three more heart-rate values: over two seconds since the lock's advert, so the interval has passed
            // and a publication would go out at once.
            let beats = world.observer.messages(on: "gattway/chest-strap/heart_rate").count
            try await world.observer.waitForMessage(on: "gattway/chest-strap/heart_rate", skipping: beats + 2)
            let published = world.observer.messages(on: "gattway/lock/advert").count
            // The advertised service list is not part of the advert payload: bluetoothd reports a change, the
            // payload stays the same, nothing is published.
            try await world.control.updateAdvert(
                Self.lock, #"{"uuids": ["0000fff0-0000-1000-8000-00805f9b34fb", "180f"]}"#)
            try await withDeadline(.seconds(20), "bluetoothd hearing the new service list") {
                while try await !world.control.heardUUIDs(Self.lock).contains(where: { $0.hasPrefix("0000180f") }) {
                    try await Task.sleep(for: .milliseconds(20))
                }
            }
            try await world.control.advertise(Self.lock, rssi: -40)
            try await world.observer.waitForMessage(on: "gattway/lock/advert", skipping: published) {
                Self.rssi($0) == -40
            }
            let after = world.observer.messages(on: "gattway/lock/advert").dropFirst(published).map {
                Self.rssi($0.payload)
            }
            #expect(after == [-40], "\(after)")
        }
    }
}
