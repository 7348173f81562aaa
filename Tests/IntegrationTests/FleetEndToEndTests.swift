import BridgeCore
import Foundation
import TestWorld
import Testing

/// Three built gateways on one simulated bluetoothd (an adapter each, scenarios/fleet.yaml) and one mosquitto: the
/// fleet ownership protocol as the daemon runs it. The strap is heard best by gw1 (hci1 −58 dBm), then gw0 (−75),
/// then gw2 (−80); the simulated strap accepts one link at a time, and a connect while another adapter holds it
/// fails (counted in the simulator's `connect_refused_link_busy`).
@Suite(.serialized, .timeLimit(.minutes(4)))
struct FleetEndToEndTests {
    static let heartRate = "gattway/strap/heart_rate"
    static let adapters = FleetWorld.adapters

    /// The strap's own stream stops; `count` values with distinct bpm (from `firstBPM`) are notified and must
    /// each arrive once, in order, and nothing else.
    private static func expectEachValueOnce(_ world: FleetWorld, count: Int, firstBPM: UInt8) async throws {
        // A value of the strap's own stream may still be on its way when the stream stops: a marker notified now
        // arrives after it (one owner relays one device's values in order), so counting starts behind everything.
        // The owner subscribes after its link is up (which is all `waitForLink` sees): the marker waits for that.
        let beforeMarker = world.observer.messages(on: Self.heartRate).count
        try await world.control.notifyOnceSubscribed(FleetWorld.strap, uuid: "2A37", [0x00, 1])
        try await world.observer.waitForMessage(on: Self.heartRate, skipping: beforeMarker) { $0 == "{\"bpm\":1}" }
        let mark = world.observer.messages(on: Self.heartRate).count
        for offset in 0..<count {
            let delivered = try await world.control.notify(
                FleetWorld.strap, uuid: "2A37", [0x00, firstBPM + UInt8(offset)])
            #expect(delivered, "value \(offset) was not delivered: the owner's subscription ended")
        }
        let last = "{\"bpm\":\(Int(firstBPM) + count - 1)}"
        try await world.observer.waitForMessage(on: Self.heartRate, skipping: mark) { $0 == last }
        let received = world.observer.messages(on: Self.heartRate).dropFirst(mark).map(\.payload)
        #expect(received == (0..<count).map { "{\"bpm\":\(Int(firstBPM) + $0)}" })
    }

    /// The owner's link follows its claim, break before make, so it may come a moment after the claim.
    private static func waitForLink(_ world: FleetWorld, on adapter: String) async throws {
        let radio = world.radio
        try await withDeadline(.seconds(20), "the strap's link on \(adapter)") {
            while try await radio.linkAdapter(device: FleetWorld.strap) != adapter {
                try await Task.sleep(for: .milliseconds(50))
            }
        }
    }

    @Test func oneGatewayOwnsTheStrapAndAnotherPublishesItWithinTenSecondsOfItsKill() async throws {
        try await Self.oneOwnerThenTakeoverAfterItsKill(in: try await FleetWorld())
    }

    /// The strap is owned, connected and published by gw1 alone, each value once; gw1 is killed and another gateway
    /// publishes the strap's values within 10 s.
    static func oneOwnerThenTakeoverAfterItsKill(in world: FleetWorld) async throws {
        try await world.run { world in
            try await world.observer.waitForMessage(on: "gattway/strap/availability") { $0 == "online" }
            try await world.waitForOwner("gw1", of: "strap")
            try await Self.waitForLink(world, on: "hci1")
            try await world.control.startNotifying(FleetWorld.strap, uuid: "2A37", rate: 0)
            try await Self.expectEachValueOnce(world, count: 20, firstBPM: 60)
            // Nobody else ever tried to connect it, and once gw1 claimed it no claim took it from gw1. (A gateway
            // that heard the strap while gw1 was still starting may have claimed it first: the signal then moved it.
            // Each gateway samples BlueZ's RSSI every 250 ms, so gw0 may also claim in gw1's term before gw1's claim
            // reaches it; that claim loses on signal, as every gateway ranks claims, and changes no owner.)
            #expect(try await world.control.counter("connect_refused_link_busy") == 0)
            let fromGW1 = Array(world.claims(of: "strap").drop { $0.gateway != "gw1" })
            #expect(FleetClaim.owners(reckonedFrom: fromGW1) == ["gw1"], "claims: \(fromGW1)")
            // The daemon's claims and sightings are what the schemas say.
            let sightings = try await world.observer.waitForMessage(on: "gattway/bridge/gw1/sightings")
            let claims = world.observer.messages(on: "gattway/fleet/owner/strap").map {
                ("gattway/fleet/owner/strap", "fleet-owner.schema.json", $0.payload)
            }
            #expect(
                try await PayloadSchemas.problems(
                    claims + [("gattway/bridge/gw1/sightings", "bridge-sightings.schema.json", sightings.payload)])
                    == [])

            // gw1 dies with its host: its process, and the link its bluetoothd held.
            let availabilityMark = world.observer.messages(on: "gattway/strap/availability").count
            world["gw1"].send(SIGKILL)
            let killed = ContinuousClock.now
            try await world.radio.disconnect(device: FleetWorld.strap, adapter: "hci1")
            try await world.control.startNotifying(FleetWorld.strap, uuid: "2A37", rate: 4)
            try await world.observer.waitForMessage(
                on: "gattway/strap/availability", skipping: availabilityMark,
                timeout: .seconds(10) - killed.duration(to: .now)
            ) { $0 == "online" }
            let valueMark = world.observer.messages(on: Self.heartRate).count
            try await world.observer.waitForMessage(
                on: Self.heartRate, skipping: valueMark, timeout: .seconds(10) - killed.duration(to: .now))
            print(
                "FleetEndToEndTests: the strap's values published again \(killed.duration(to: .now)) after the owner's kill"
            )
            let owner = try #require(world.claimedOwners(of: "strap").last)
            #expect(owner != "gw1")
            #expect(try await world.radio.linkAdapter(device: FleetWorld.strap) == Self.adapters[owner])
            try await world.control.startNotifying(FleetWorld.strap, uuid: "2A37", rate: 0)
            try await Self.expectEachValueOnce(world, count: 10, firstBPM: 100)
        }
    }

    @Test func aSignalThatMovesMovesOwnershipOnceAndOnlyOnce() async throws {
        try await Self.ownershipFollowsAMovedSignalOnce(in: try await FleetWorld(fleet: "hold: 3"))
    }

    /// The strap moves from gw1's room to gw2's: ownership moves once, and stays.
    static func ownershipFollowsAMovedSignalOnce(in world: FleetWorld) async throws {
        try await world.run { world in
            try await world.observer.waitForMessage(on: "gattway/strap/availability") { $0 == "online" }
            try await world.waitForOwner("gw1", of: "strap")
            // Who claimed it while the gateways were starting (a gateway that heard it first may have, before gw1's
            // stronger signal took it over) is not this test's matter; from here ownership moves once.
            let settled = world.owners(of: "strap")
            #expect(settled.last == "gw1", "claims: \(world.claims(of: "strap"))")
            // The strap moves next to gw2's room and away from gw1's.
            try await world.radio.setRSSI(device: FleetWorld.strap, adapter: "hci2", rssi: -45)
            try await world.radio.setRSSI(device: FleetWorld.strap, adapter: "hci1", rssi: -85)
            try await world.waitForOwner("gw2", of: "strap")
            let moved = world.observer.messages(on: Self.heartRate).count
            // gw2 connects once gw1 let go; its values flow. Over the next 15 of them ownership stays put.
            try await world.observer.waitForMessage(on: Self.heartRate, skipping: moved + 15, timeout: .seconds(60))
            #expect(try await world.radio.linkAdapter(device: FleetWorld.strap) == "hci2")
            #expect(
                Array(world.owners(of: "strap").dropFirst(settled.count)) == ["gw2"],
                "claims: \(world.claims(of: "strap"))")
            try await world.control.startNotifying(FleetWorld.strap, uuid: "2A37", rate: 0)
            try await Self.expectEachValueOnce(world, count: 10, firstBPM: 70)
        }
    }

    @Test func pinningWinsAndRequestsAndCommandsAreAnsweredOnce() async throws {
        try await Self.pinningWinsAndEachCommandIsAnsweredOnce(in: try await FleetWorld(fleet: Self.pinnedFleet))
    }

    static let pinnedFleet = "hold: 3, pinned: { strap: gw2 }"

    /// The strap pinned to gw2 (which hears it worst) is gw2's; the lock's /set and a request to gw1 are answered
    /// once, by the gateway they are for.
    static func pinningWinsAndEachCommandIsAnsweredOnce(in world: FleetWorld) async throws {
        try await world.run { world in
            // gw2 hears the strap worst of all, yet owns it.
            try await world.observer.waitForMessage(on: "gattway/strap/availability") { $0 == "online" }
            try await world.waitForOwner("gw2", of: "strap")
            try await Self.waitForLink(world, on: "hci2")
            #expect(
                world.observer.messages(on: "gattway/fleet/owner/strap").last?.payload.contains("\"pinned\":true")
                    == true)
            try await world.control.startNotifying(FleetWorld.strap, uuid: "2A37", rate: 0)
            try await Self.expectEachValueOnce(world, count: 10, firstBPM: 80)
            // Whoever claimed before gw2 heard the strap, nobody claimed it after gw2 did.
            let owners = world.claimedOwners(of: "strap")
            let pinnedFrom = try #require(owners.firstIndex(of: "gw2"))
            #expect(Set(owners[pinnedFrom...]) == ["gw2"])

            // The lock (on_demand) is gw0's, heard best there: one write, one result.
            try await world.waitForOwner("gw0", of: "lock")
            try await world.publish("gattway/lock/control/set", #"{"value":"unlock","transaction":"once"}"#)
            try await world.observer.waitForMessage(on: "gattway/lock/control/set/result") {
                $0.contains(#""ok":true"#)
            }
            // The others received the /set and left it to its owner, as their counters say.
            for id in ["gw1", "gw2"] {
                try await world.waitForCounter("gattway.fleet.commands_left_to_owner", of: id, toBe: 1)
            }
            // A request to gw1 alone, then one to each of the others: they read the broker in order, so once they
            // have answered theirs they have seen the first request too.
            try await world.publish("gattway/bridge/gw1/request/devices", #"{"transaction":"first"}"#)
            for id in ["gw0", "gw2"] {
                try await world.publish("gattway/bridge/\(id)/request/devices", #"{"transaction":"\#(id)"}"#)
                try await world.observer.waitForMessage(on: "gattway/bridge/\(id)/response/devices") {
                    $0.contains(#""transaction":"\#(id)""#)
                }
            }
            try await world.observer.waitForMessage(on: "gattway/bridge/gw1/response/devices") { $0.contains("first") }
            let firstAnswers = world.observer.messages.filter {
                $0.topic.contains("/response/") && $0.payload.contains(#""first""#)
            }
            #expect(firstAnswers.map(\.topic) == ["gattway/bridge/gw1/response/devices"])
            #expect(world.observer.messages(on: "gattway/lock/control/set/result").count == 1)
            #expect(
                try await world.control.writes(FleetWorld.lock, uuid: "0000fff1-0000-1000-8000-00805f9b34fb").count == 1
            )
        }
    }
}

/// The same fleet on a two-node RabbitMQ cluster (MQTT 3.1.1): gw0 and gw2 on the first node, gw1 (the strap's
/// first owner) on the second. Claims reach the other node live (retained ones stay on their node, so the devices
/// come into range only once every gateway is up, as in every fleet test).
/// One cluster for the three scenarios (starting one takes 20 s on an idle machine, minutes under load); between
/// them the claims retained on either node are cleared, as a fleet that starts afresh would find none.
@Suite(.serialized, .timeLimit(.minutes(15)))
struct FleetRabbitMQEndToEndTests {
    @Test func theFleetScenariosAcrossTwoNodes() async throws {
        let cluster = try await RabbitMQCluster(nodeCount: 2)
        do {
            try await FleetEndToEndTests.oneOwnerThenTakeoverAfterItsKill(in: try await world(on: cluster))
            try await clearClaims(on: cluster)
            try await FleetEndToEndTests.ownershipFollowsAMovedSignalOnce(in: try await world(on: cluster))
            try await clearClaims(on: cluster)
            try await FleetEndToEndTests.pinningWinsAndEachCommandIsAnsweredOnce(
                in: try await world(on: cluster, fleet: FleetEndToEndTests.pinnedFleet))
        } catch {
            Issue.record("node 1 log:\n\(cluster.log(node: 0))\nnode 2 log:\n\(cluster.log(node: 1))")
            await cluster.stop()
            throw error
        }
        await cluster.stop()
    }

    private func world(on cluster: RabbitMQCluster, fleet: String = "hold: 3") async throws -> FleetWorld {
        try await FleetWorld(fleet: fleet, broker: .rabbitMQ(cluster), stopsBroker: false)
    }

    /// An empty retained message on every claim topic, on each node (each keeps its own retained messages).
    private func clearClaims(on cluster: RabbitMQCluster) async throws {
        for node in cluster.nodes {
            for device in ["strap", "lock", "thermometer"] {
                try await MQTTObserver.publish(
                    port: node.mqttPort, topic: "gattway/fleet/owner/\(device)", payload: "", retain: true,
                    extraArguments: ["-V", "311"])
            }
        }
    }
}
