import Foundation
import TestWorld
import Testing

/// What the README marks "retained" is there for a client that subscribes later, and `mqtt.retain: false`
/// leaves the value topics unretained. A late subscriber is the only way to see retention: a broker delivers live
/// messages to existing subscribers with the retain flag cleared.
@Suite(.serialized, .timeLimit(.minutes(3)))
struct ReadmePromisesRetainedEndToEndTests {
    static let retainedTopics = [
        "gattway/bridge/state", "gattway/bridge/info", "gattway/bridge/devices",
        "gattway/chest-strap/availability", "gattway/lock/availability", "gattway/chest-strap/heart_rate",
    ]

    @Test func stateInfoDevicesAvailabilityAndValuesAreRetained() async throws {
        let world = try await CentralWorld(scenario: "demo.yaml", config: Configs.strapAndLock)
        try await world.run { world in
            try await world.observer.waitForMessage(on: "gattway/bridge/state") { $0 == "online" }
            try await world.observer.waitForMessage(on: "gattway/bridge/info")
            try await world.observer.waitForMessage(on: "gattway/bridge/devices") { $0.contains("\"name\":\"lock\"") }
            try await world.observer.waitForMessage(on: "gattway/chest-strap/availability") { $0 == "online" }
            try await world.observer.waitForMessage(on: "gattway/lock/availability") { $0 == "online" }
            try await world.observer.waitForMessage(on: "gattway/chest-strap/heart_rate")
            // Subscribed only now: the broker hands over its retained copies before the observer's ready marker.
            let late = try await MQTTPropertyObserver(.init(port: world.broker.port), filters: Self.retainedTopics)
            for topic in Self.retainedTopics {
                #expect(late.messages(on: topic).contains { $0.retained }, "\(topic) is not retained")
            }
            let state = late.messages(on: "gattway/bridge/state").first { $0.retained }
            #expect(state?.payload == "online")
            await late.stop()
        }
    }

    @Test func retainFalseLeavesValueTopicsUnretained() async throws {
        let world = try await CentralWorld(
            scenario: "demo.yaml", config: Configs.strapAndLock, extraMQTT: "  retain: false")
        try await world.run { world in
            try await world.observer.waitForMessage(on: "gattway/chest-strap/availability") { $0 == "online" }
            try await world.observer.waitForMessage(on: "gattway/chest-strap/heart_rate")
            let late = try await MQTTPropertyObserver(
                .init(port: world.broker.port),
                filters: ["gattway/chest-strap/availability", "gattway/chest-strap/heart_rate"])
            // Availability stays retained (the README says so whatever `retain` is); the value does not.
            #expect(late.messages(on: "gattway/chest-strap/availability").contains { $0.retained })
            #expect(
                late.messages(on: "gattway/chest-strap/heart_rate").allSatisfy { !$0.retained },
                "\(late.messages(on: "gattway/chest-strap/heart_rate"))")
            await late.stop()
        }
    }
}
