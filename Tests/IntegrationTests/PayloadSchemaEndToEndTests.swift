import DBus
import Foundation
import TestWorld
import Testing

/// Every payload shape Gattway publishes has a JSON Schema in `schemas/mqtt/`; these tests check real payloads,
/// captured from the built binary, against them.
@Suite(.serialized, .timeLimit(.minutes(3)))
struct PayloadSchemaEndToEndTests {
    /// The schema of each topic Gattway publishes on (nil: a value topic whose shape is the codec's).
    static func schema(of topic: String) -> String? {
        let levels = topic.split(separator: "/").map(String.init)
        switch (levels.count, levels.last ?? "") {
        case (3, "state") where levels[1] == "bridge": return "state.schema.json"
        case (3, "info") where levels[1] == "bridge": return "bridge-info.schema.json"
        case (3, "devices") where levels[1] == "bridge": return "bridge-devices.schema.json"
        case (3, "event") where levels[1] == "bridge": return "bridge-event.schema.json"
        case (3, "metrics") where levels[1] == "bridge": return "bridge-metrics.schema.json"
        case (3, "health") where levels[1] == "bridge": return "bridge-health.schema.json"
        case (4, _) where levels[1] == "bridge" && levels[2] == "response": return "bridge-response.schema.json"
        case (3, "status") where levels[1] == "peripheral": return "peripheral-status.schema.json"
        case (3, "availability"): return "state.schema.json"
        case (3, "advert"): return "advert.schema.json"
        case (_, "result") where levels.dropLast().last == "set": return "set-result.schema.json"
        case (_, "result") where levels.dropLast().last == "get": return "get-result.schema.json"
        case (3, "heart_rate"): return "heart-rate-measurement.schema.json"
        default: return nil
        }
    }

    private func check(_ messages: [MQTTObserver.Message], expecting schemas: Set<String>) async throws {
        let cases = messages.compactMap { message in
            Self.schema(of: message.topic).map { (topic: message.topic, schema: $0, payload: message.payload) }
        }
        #expect(Set(cases.map(\.schema)).isSuperset(of: schemas), "checked: \(Set(cases.map(\.schema)))")
        let problems = try await PayloadSchemas.problems(cases)
        #expect(problems.isEmpty, "\(problems.joined(separator: "\n"))")
    }

    @Test func theCentralBridgesPayloadsMatchTheirSchemas() async throws {
        let world = try await CentralWorld(
            scenario: "demo.yaml", config: Configs.strapAndLock, extraMQTT: "  metrics_interval: 1"
        ) { control in
            // One failed connect, for a bridge/event.
            try await control.call(
                "InjectError",
                [
                    .string("Connect"), .string("org.bluez.Error.Failed"), .string("le-connection-abort-by-local"),
                    .uint32(1),
                ])
        }
        try await world.run { world in
            let observer = world.observer
            try await observer.waitForMessage(on: "gattway/lock/availability") { $0 == "online" }
            try await observer.waitForMessage(on: "gattway/chest-strap/availability") { $0 == "online" }
            try await observer.waitForMessage(on: "gattway/chest-strap/heart_rate")
            try await observer.waitForMessage(on: "gattway/thermometer/advert")
            try await observer.waitForMessage(on: "gattway/bridge/event")
            try await world.publish("gattway/lock/control/set", #"{"value":"lock","transaction":"t-1"}"#)
            try await world.publish("gattway/lock/control/set", "jam")
            try await observer.waitForMessage(on: "gattway/lock/control/set/result", skipping: 1)
            try await world.publish("gattway/lock/state/get", #"{"value":"","transaction":"g-1"}"#)
            try await world.publish("gattway/lock/state/get", #"{"value":null}"#)
            try await observer.waitForMessage(on: "gattway/lock/state/get/result", skipping: 1)
            try await world.publish("gattway/bridge/request/devices", #"{"transaction":5}"#)
            try await observer.waitForMessage(on: "gattway/bridge/response/devices")
            try await world.publish("gattway/bridge/request/connect", #"{"device":"nobody"}"#)
            try await observer.waitForMessage(on: "gattway/bridge/response/connect")
            try await observer.waitForMessage(on: "gattway/bridge/metrics")
            try await check(
                observer.messages,
                expecting: [
                    "state.schema.json", "bridge-info.schema.json", "bridge-devices.schema.json",
                    "bridge-event.schema.json",
                    "bridge-metrics.schema.json", "bridge-response.schema.json", "advert.schema.json",
                    "set-result.schema.json", "get-result.schema.json", "heart-rate-measurement.schema.json",
                    "bridge-health.schema.json",
                ])
        }
    }

    @Test func thePeripheralsPayloadsMatchTheirSchemas() async throws {
        let world = try await PeripheralWorld()
        try await world.run { world in
            try await world.waitForApplication()
            try await world.publish("gattway/bridge/request/advertise", #"{"enabled":false,"transaction":"a"}"#)
            try await world.observer.waitForMessage(on: "gattway/bridge/response/advertise")
            try await world.publish("gattway/bridge/request/advertise", "not json")
            try await world.observer.waitForMessage(on: "gattway/bridge/response/advertise", skipping: 1)
            try await world.observer.waitForMessage(on: "gattway/peripheral/status") {
                $0.contains(#""advertising":false"#)
            }
            try await check(
                world.observer.messages,
                expecting: [
                    "state.schema.json", "peripheral-status.schema.json", "bridge-response.schema.json",
                ])
        }
    }
}
