import Foundation
import Testing
import TestWorld

/// Hostile and numerous advertisers: the daemon stays up and its memory stays bounded.
@Suite(.serialized, .timeLimit(.minutes(3)))
struct CrowdEndToEndTests {
    @Test func thousandAdvertisersWithHostileBytesLeaveMemoryBounded() async throws {
        let world = try await CentralWorld(
            scenario: "crowd.yaml",
            config: """
                bluetooth:
                  adapter: hci0
                  max_tracked_devices: 200
                  scan: { duplicates: true }
                devices:
                  - name: any-vendor
                    match: { manufacturer_id: 65535 }
                    connect: never
                """)
        try await world.run { world in
            try await world.observer.waitForMessage(on: "gattway/bridge/state") { $0 == "online" }
            var peak = 0
            // Sample resident memory while the crowd advertises for a while.
            for _ in 0..<40 {
                try await Task.sleep(for: .milliseconds(250))
                #expect(world.gattway.isRunning, "gattway died: \(world.gattwayLog.suffix(2000))")
                peak = max(peak, residentMemoryBytes(pid: world.gattway.pid) ?? 0)
            }
            // Still answering after the flood.
            try await world.publish("gattway/bridge/request/devices", "{}")
            try await world.observer.waitForMessage(on: "gattway/bridge/response/devices") { $0.contains("\"ok\":true") }
            #expect(peak > 0)
            #expect(peak < 80 * 1024 * 1024, "resident memory peaked at \(peak / 1024) KiB")
        }
    }
}
