import Foundation
import TestWorld
import Testing

/// `<base>/bridge/<gateway_id>/health`: retained JSON from the built binary, published at once when something
/// changes (here: bluetoothd goes away and comes back).
@Suite(.serialized, .timeLimit(.minutes(3)))
struct HealthEndToEndTests {
    private static func field(_ payload: String, _ path: String...) -> Any? {
        var value: Any? = try? JSONSerialization.jsonObject(with: Data(payload.utf8))
        for key in path { value = (value as? [String: Any])?[key] }
        return value
    }

    @Test func healthFollowsBlueZAndTheDevicesAndMatchesItsSchema() async throws {
        let topic = "gattway/bridge/hall/health"
        let world = try await CentralWorld(
            scenario: "demo.yaml", config: Configs.strapAndLock, extraMQTT: "  gateway_id: hall")
        try await world.run { world in
            let connected = try await world.observer.waitForMessage(on: topic) { payload in
                (Self.field(payload, "devices", "connected") as? Int) == 2
            }
            #expect(Self.field(connected.payload, "status") as? String == "ok")
            #expect(Self.field(connected.payload, "bluez_present") as? Bool == true)
            #expect(Self.field(connected.payload, "adapter_powered") as? Bool == true)
            #expect(Self.field(connected.payload, "broker_reconnects") as? Int == 0)
            // A gateway with a gateway_id, alone in its fleet, owns what it hears: the strap, the lock and the
            // thermometer (passive, and owned all the same: its readings are published by one gateway).
            try await world.observer.waitForMessage(on: topic) { (Self.field($0, "devices", "owned") as? Int) == 3 }
            #expect(Self.field(connected.payload, "queues", "mqtt_outstanding") is Int)
            #expect(try await PayloadSchemas.problems([(topic, "bridge-health.schema.json", connected.payload)]) == [])

            let seen = world.observer.messages(on: topic).count
            try await world.control.restartBluetoothd(downSeconds: 4)
            let degraded = try await world.observer.waitForMessage(on: topic, skipping: seen) { payload in
                Self.field(payload, "bluez_present") as? Bool == false
            }
            #expect(Self.field(degraded.payload, "status") as? String == "degraded")
            #expect(try await PayloadSchemas.problems([(topic, "bridge-health.schema.json", degraded.payload)]) == [])
            // Back to ok after the degraded message (which may already have arrived: count from where it is).
            let messages = world.observer.messages(on: topic)
            let degradedAt = try #require(
                messages.indices.last { Self.field(messages[$0].payload, "bluez_present") as? Bool == false })
            _ = try await world.observer.waitForMessage(on: topic, skipping: degradedAt + 1) { payload in
                Self.field(payload, "status") as? String == "ok"
            }
            // Retained: a client that subscribes later gets the last one at once.
            let late = try await MQTTObserver(port: world.broker.port, filters: [topic])
            let retained = try await late.waitForMessage(on: topic)
            await late.stop()
            #expect(retained.retained)
        }
    }
}
