import BridgeCore
import TestWorld
import Testing

/// The fleet and health payloads, as BridgeCore writes them, against their schemas in `schemas/mqtt/` (checked by
/// Python's jsonschema). The daemon publishes health already; the fleet payloads once the central bridge runs
/// the ownership protocol.
@Suite struct FleetPayloadSchemaTests {
    @Test func claimsSightingsAndHealthMatchTheirSchemas() async throws {
        let text = { (bytes: [UInt8]) in String(decoding: bytes, as: UTF8.self) }
        let health = HealthReport(
            uptimeSeconds: 12, bluezPresent: true, adapterPowered: false, brokerReconnects: 2, devicesKnown: 3,
            devicesConnected: 1, queues: [.init(name: "mqtt_outstanding", depth: 1)],
            lastError: .init(atUptimeSeconds: 10, message: String(repeating: "e", count: 400)))
        let cases: [(topic: String, schema: String, payload: String)] = [
            (
                "gattway/fleet/owner/lock", "fleet-owner.schema.json",
                text(FleetClaim(gateway: "hall", term: 7, rssi: -61).payload)
            ),
            (
                "gattway/fleet/owner/lock", "fleet-owner.schema.json",
                text(FleetClaim(gateway: "hall", term: 9, rssi: -80, pinned: true).payload)
            ),
            ("gattway/fleet/owner/lock", "fleet-owner.schema.json", text(FleetClaim.release(after: 9).payload)),
            (
                "gattway/bridge/hall/sightings", "bridge-sightings.schema.json",
                text(
                    FleetSightings(
                        gateway: "hall", freeSlots: 2, devices: [.init(device: "lock", rssi: -61, owned: true)]
                    ).payload)
            ),
            ("gattway/bridge/hall/health", "bridge-health.schema.json", text(health.payload)),
        ]
        #expect(try await PayloadSchemas.problems(cases) == [])
        // The schemas are not so loose that anything passes.
        let wrong: [(topic: String, schema: String, payload: String)] = [
            ("gattway/fleet/owner/lock", "fleet-owner.schema.json", #"{"gateway":"hall","term":-1,"pinned":false}"#),
            ("gattway/bridge/hall/health", "bridge-health.schema.json", #"{"status":"fine"}"#),
        ]
        #expect(try await PayloadSchemas.problems(wrong).count >= 2)
    }
}
