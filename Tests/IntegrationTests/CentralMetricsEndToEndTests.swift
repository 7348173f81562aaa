import Foundation
import TestWorld
import Testing

/// `<base>/bridge/metrics`: every counter and gauge as JSON, every `mqtt.metrics_interval` seconds.
@Suite(.serialized, .timeLimit(.minutes(3)))
struct CentralMetricsEndToEndTests {
    private static func section(_ payload: String, _ name: String) -> [String: Double] {
        let json = try? JSONSerialization.jsonObject(with: Data(payload.utf8)) as? [String: Any]
        return (json?[name] as? [String: Any])?.compactMapValues { ($0 as? NSNumber)?.doubleValue } ?? [:]
    }

    /// The strap notifies `bpm`; returns how many metrics snapshots gattway had published when that value arrived.
    /// One client connection carries both, so every later snapshot was taken after the value was published.
    private static func notify(_ bpm: UInt8, in world: CentralWorld) async throws -> Int {
        try await world.control.notify("C4:7C:8D:6A:3E:11", uuid: "2A37", [0x00, bpm])
        try await world.observer.waitForMessage(on: "gattway/chest-strap/heart_rate") { $0 == "{\"bpm\":\(bpm)}" }
        return world.observer.messages(on: "gattway/bridge/metrics").count
    }

    private static func notifications(_ snapshot: String) -> Double? {
        section(snapshot, "counters")["gattway.central.notifications"]
    }

    @Test func metricsSnapshotsCountEachNotificationAndTheConnections() async throws {
        let world = try await CentralWorld(
            scenario: "demo.yaml", config: Configs.strapAndLock, extraMQTT: "  metrics_interval: 1")
        try await world.run { world in
            try await world.observer.waitForMessage(on: "gattway/chest-strap/availability") { $0 == "online" }
            // Only the notifications this test sends: the strap's own stream stops.
            try await world.control.startNotifying("C4:7C:8D:6A:3E:11", uuid: "2A37", rate: 0)
            // The counter is bumped just after the value is handed to MQTT, so the second snapshot after the value
            // is the one sure to include it.
            let earlier = try await Self.notify(80, in: world)
            let before = try await world.observer.waitForMessage(on: "gattway/bridge/metrics", skipping: earlier + 1)
            let counted = try #require(Self.notifications(before.payload))
            #expect(counted >= 1)
            let later = try await Self.notify(90, in: world)
            let snapshot = try await world.observer.waitForMessage(on: "gattway/bridge/metrics", skipping: later) {
                Self.notifications($0) == counted + 1
            }
            let counters = Self.section(snapshot.payload, "counters")
            let gauges = Self.section(snapshot.payload, "gauges")
            #expect(counters["gattway.central.connects"] ?? 0 >= 2, "\(counters)")
            // Running totals are counters, levels are gauges.
            #expect(counters["gattway.mqtt.messages_published{connection=main}"] ?? 0 > 0, "\(counters)")
            #expect(counters["gattway.dbus.signals_dropped"] == 0, "\(counters)")
            #expect(counters["gattway.mqtt.messages_lost_with_link{connection=main}"] == 0, "\(counters)")
            #expect(gauges["gattway.mqtt.messages_published{connection=main}"] == nil, "\(gauges)")
            #expect(gauges["gattway.mqtt.outstanding_publishes{connection=main}"] != nil, "\(gauges)")
            #expect(snapshot.retained == false)
        }
    }
}
