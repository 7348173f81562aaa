import Foundation
import Testing
import TestWorld

/// `<base>/bridge/metrics`: every counter and gauge as JSON, every `mqtt.metrics_interval` seconds.
@Suite(.serialized, .timeLimit(.minutes(3)))
struct CentralMetricsEndToEndTests {
    private static func section(_ payload: String, _ name: String) -> [String: Double] {
        let json = try? JSONSerialization.jsonObject(with: Data(payload.utf8)) as? [String: Any]
        return (json?[name] as? [String: Any])?.compactMapValues { ($0 as? NSNumber)?.doubleValue } ?? [:]
    }

    @Test func metricsSnapshotsCountNotificationsAndTheConnections() async throws {
        let world = try await CentralWorld(
            scenario: "demo.yaml", config: Configs.strapAndLock, extraMQTT: "  metrics_interval: 1")
        try await world.run { world in
            try await world.observer.waitForMessage(on: "gattway/chest-strap/availability") { $0 == "online" }
            try await world.control.notify("C4:7C:8D:6A:3E:11", uuid: "2A37", [0x00, 0x50])
            try await world.observer.waitForMessage(on: "gattway/chest-strap/heart_rate") { $0 == #"{"bpm":80}"# }
            let snapshot = try await world.observer.waitForMessage(on: "gattway/bridge/metrics") { payload in
                (Self.section(payload, "counters")["gattway.central.notifications"] ?? 0) >= 1
            }
            let counters = Self.section(snapshot.payload, "counters")
            let gauges = Self.section(snapshot.payload, "gauges")
            #expect(counters["gattway.central.connects"] ?? 0 >= 2, "\(counters)")
            #expect(gauges["gattway.mqtt.messages_published{connection=main}"] ?? 0 > 0, "\(gauges)")
            #expect(gauges["gattway.dbus.signals_dropped"] == 0, "\(gauges)")
            #expect(snapshot.retained == false)
        }
    }
}
