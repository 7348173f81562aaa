import Foundation
import TestWorld
import Testing

/// Hostile and numerous advertisers: the daemon stays up, tracks no more devices than allowed, and its memory stays
/// bounded.
@Suite(.serialized, .timeLimit(.minutes(3)))
struct CrowdEndToEndTests {
    /// The crowd's 1,000 advertisers include about a hundred with manufacturer 0xFFFF: more than the bound.
    static let maxTracked = 20

    /// The number of entries in a `bridge/devices` list or in a `bridge/response/devices` answer.
    private static func deviceCount(_ payload: String) -> Int? {
        let json = try? JSONSerialization.jsonObject(with: Data(payload.utf8))
        let list = (json as? [Any]) ?? ((json as? [String: Any])?["devices"] as? [Any])
        return list?.count
    }

    @Test func thousandAdvertisersWithHostileBytesStayWithinMaxTrackedDevicesAndBoundedMemory() async throws {
        let world = try await CentralWorld(
            scenario: "crowd.yaml",
            config: """
                bluetooth:
                  adapter: hci0
                  max_tracked_devices: \(Self.maxTracked)
                  scan: { duplicates: true }
                devices:
                  - name: any-vendor
                    match: { manufacturer_id: 65535 }
                    connect: never
                """)
        try await world.run { world in
            try await world.observer.waitForMessage(on: "gattway/bridge/state") { $0 == "online" }
            // The crowd is heard: matching advertisers fill the tracked list up to the bound.
            try await world.observer.waitForMessage(on: "gattway/bridge/devices", timeout: .seconds(60)) {
                (Self.deviceCount($0) ?? 0) >= Self.maxTracked
            }
            // Every advertiser then advertises twice more (the simulator counts its reports), while resident
            // memory is sampled: at least once, even when a busy machine lets the 2,000 reports pass before the
            // first check.
            let reportsAtBound = try await world.control.counter("adv_reports")
            var peak = 0
            let deadline = ContinuousClock.now + .seconds(60)
            repeat {
                guard ContinuousClock.now < deadline else {
                    throw TestWorldError("the crowd did not advertise 2,000 more reports within 60 s")
                }
                #expect(world.gattway.isRunning, "gattway died: \(world.gattwayLog.suffix(2000))")
                peak = max(peak, residentMemoryBytes(pid: world.gattway.pid) ?? 0)
                try await Task.sleep(for: .milliseconds(250))
            } while try await world.control.counter("adv_reports") < reportsAtBound + 2000
            // Still answering after the flood, with exactly the bound of tracked devices.
            try await world.publish("gattway/bridge/request/devices", "{}")
            let answer = try await world.observer.waitForMessage(on: "gattway/bridge/response/devices") {
                $0.contains("\"ok\":true")
            }
            #expect(Self.deviceCount(answer.payload) == Self.maxTracked)
            let lists = world.observer.messages(on: "gattway/bridge/devices").map { Self.deviceCount($0.payload) ?? -1 }
            #expect(lists.allSatisfy { $0 <= Self.maxTracked }, "\(lists)")
            #expect(peak > 0)
            #expect(peak < 80 * 1024 * 1024, "resident memory peaked at \(peak / 1024) KiB")
        }
    }
}
