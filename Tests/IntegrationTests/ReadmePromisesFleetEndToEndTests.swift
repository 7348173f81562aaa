import Foundation
import TestWorld
import Testing

/// `mqtt.gateway_id` moves the gateway's own topics (state, info, metrics, …) under `bridge/<gateway_id>/` so that a
/// fleet can share a base topic; `mqtt.metrics_interval: 0` publishes no metrics at all.
@Suite(.serialized, .timeLimit(.minutes(3)))
struct ReadmePromisesFleetEndToEndTests {
    @Test func gatewayIDNamesTheStateAndMetricsTopics() async throws {
        let world = try await CentralWorld(
            scenario: "demo.yaml", config: Configs.strapAndLock,
            extraMQTT: "  gateway_id: kitchen\n  metrics_interval: 1")
        try await world.run { world in
            try await world.observer.waitForMessage(on: "gattway/bridge/kitchen/state") { $0 == "online" }
            try await world.observer.waitForMessage(on: "gattway/bridge/kitchen/info") {
                $0.contains(#""gateway_id":"kitchen""#)
            }
            try await world.observer.waitForMessage(on: "gattway/bridge/kitchen/metrics") {
                $0.contains("\"counters\"")
            }
            try await world.observer.waitForMessage(on: "gattway/bridge/kitchen/metrics", skipping: 1)
            #expect(world.observer.messages(on: "gattway/bridge/metrics").isEmpty)
            #expect(world.observer.messages(on: "gattway/bridge/state").isEmpty)
            #expect(world.observer.messages(on: "gattway/bridge/info").isEmpty)
            // The retained state, and the Last Will with it, live under the gateway's name too.
            let late = try await MQTTPropertyObserver(
                .init(port: world.broker.port), filters: ["gattway/bridge/kitchen/state", "gattway/bridge/state"])
            #expect(
                late.messages(on: "gattway/bridge/kitchen/state").contains { $0.retained && $0.payload == "online" })
            #expect(late.messages(on: "gattway/bridge/state").isEmpty)
            await late.stop()
            world.gattway.send(SIGKILL)
            try await world.observer.waitForMessage(on: "gattway/bridge/kitchen/state", timeout: .seconds(90)) {
                $0 == "offline"
            }
        }
    }

    @Test func metricsIntervalZeroPublishesNoMetrics() async throws {
        let world = try await CentralWorld(
            scenario: "demo.yaml", config: Configs.strapAndLock, extraMQTT: "  metrics_interval: 0")
        try await world.run { world in
            try await world.observer.waitForMessage(on: "gattway/chest-strap/availability") { $0 == "online" }
            // The strap notifies once a second: three more values mean more than two seconds of running, in which a
            // one-second interval (the smallest there is) would have published twice.
            let before = world.observer.messages(on: "gattway/chest-strap/heart_rate").count
            try await world.observer.waitForMessage(on: "gattway/chest-strap/heart_rate", skipping: before + 2)
            #expect(world.observer.messages(on: "gattway/bridge/metrics").isEmpty)
            #expect(world.gattway.isRunning)
        }
    }
}
