import BluetoothCore
import BridgeCore
import BridgeTesting
import MQTTCore
import Testing

@testable import CentralBridge

/// Three gateways (`gateway_id` a, b, c) on one broker hear the same `always` strap at different signals; the
/// ownership protocol lets exactly one of them connect it, publish it and execute its commands.
@Suite(.timeLimit(.minutes(1)))
struct FleetCentralBridgeTests {
    typealias Fleet = FleetHarness

    /// Runs the fleet, with the strap heard at `signals`, until some gateway announced the strap online.
    private func owned(_ fleet: Fleet, signals: [String: Int16]) async throws {
        try await fleet.waitForTickLoops()
        fleet.hear(signals)
        try await fleet.advance {
            fleet.broker.published(on: "gw/strap/availability").contains { $0.payloadText == "online" }
        }
    }

    @Test func exactlyOneGatewayConnectsAndPublishesTheStrongestHearer() async throws {
        let fleet = try Fleet()
        try await fleet.run {
            try await owned(fleet, signals: ["a": -45, "b": -70, "c": -90])
            // Long past every takeover delay and the hold time: still one owner.
            try await fleet.pass(.seconds(15))
            #expect(fleet.connects(of: "a") == 1)
            #expect(fleet.connects(of: "b") == 0)
            #expect(fleet.connects(of: "c") == 0)
            let claim = try #require(fleet.broker.retainedMessages["gw/fleet/owner/strap"])
            #expect(claim.payloadText.contains(#""gateway":"a""#))
            // Only the owner holds a subscription to the strap's notifications; its values come from it alone.
            #expect(fleet["a"].central.notify(Fleet.strap, BluetoothUUID("2A37")!, [0x48]))
            #expect(!fleet["b"].central.notify(Fleet.strap, BluetoothUUID("2A37")!, [0x49]))
            _ = try await fleet.broker.nextPublished(on: "gw/strap/heart_rate")
            #expect(fleet.heartRatePublishers() == ["a"])
            #expect(
                Set(fleet.broker.publications.filter { $0.message.topic == "gw/strap/availability" }.map(\.clientID))
                    == ["a"])
        }
    }

    @Test func onlyTheOwnerExecutesSetAndTheOthersLeaveItAlone() async throws {
        let fleet = try Fleet()
        try await fleet.run {
            try await owned(fleet, signals: ["a": -45, "b": -70, "c": -90])
            try await fleet.user.publish(MQTTMessage(topic: "gw/strap/control/set", text: "01", qos: .atLeastOnce))
            _ = try await fleet.broker.nextPublished(on: "gw/strap/control/set/result")
            // b and c read their messages in order: once they answer a request sent after the /set, they have
            // seen the /set too.
            for id in ["b", "c"] {
                let mark = fleet.broker.publicationCount
                try await fleet.user.publish(
                    MQTTMessage(topic: "gw/bridge/\(id)/request/devices", text: "{}", qos: .atLeastOnce))
                _ = try await fleet.broker.nextPublished(on: "gw/bridge/\(id)/response/devices", since: mark)
            }
            let results = fleet.broker.publications.filter { $0.message.topic == "gw/strap/control/set/result" }
            #expect(results.map(\.clientID) == ["a"])
            #expect(fleet["a"].central.operations.entries.contains { if case .write = $0 { true } else { false } })
            #expect(!fleet["b"].central.operations.entries.contains { if case .write = $0 { true } else { false } })
        }
    }

    @Test func theOwnersLastWillHandsTheStrapToTheNextStrongest() async throws {
        let fleet = try Fleet()
        try await fleet.run {
            try await owned(fleet, signals: ["a": -45, "b": -70, "c": -90])
            let mark = fleet.broker.publicationCount
            fleet["a"].mqtt.dropConnection()
            try await fleet.advance(upTo: .seconds(10), running: ["b", "c"]) { fleet.connects(of: "b") == 1 }
            _ = try await fleet.broker.nextPublished(on: "gw/strap/availability", since: mark) {
                $0.payloadText == "online"
            }
            let claim = try #require(fleet.broker.retainedMessages["gw/fleet/owner/strap"])
            #expect(claim.payloadText.contains(#""gateway":"b""#))
            #expect(fleet.connects(of: "c") == 0)
            // a, cut off from the broker, stops acting as owner once the grace for a lost broker is over, and lets the
            // strap go.
            try await fleet.pass(.seconds(2))
            _ = try await fleet["a"].central.operations.first { $0 == .disconnect(Fleet.strap.path) }
            #expect(fleet["b"].central.notify(Fleet.strap, BluetoothUUID("2A37")!, [0x50]))
            _ = try await fleet.broker.nextPublished(on: "gw/strap/heart_rate", since: mark)
            #expect(fleet.heartRatePublishers() == ["b"])
        }
    }

    @Test func aSignalThatMovesMovesOwnershipOnce() async throws {
        let fleet = try Fleet()
        try await fleet.run {
            try await owned(fleet, signals: ["a": -45, "b": -70, "c": -90])
            // b is now far stronger than the signal a claimed: after the hold time it takes over, once.
            fleet.hear(["a": -75, "b": -35])
            try await fleet.advance(upTo: .seconds(30)) { fleet.connects(of: "b") == 1 }
            _ = try await fleet["a"].central.operations.first { $0 == .disconnect(Fleet.strap.path) }
            // Both signals stay where they are: no further change, however long.
            try await fleet.pass(.seconds(40))
            #expect(fleet.connects(of: "a") == 1)
            #expect(fleet.connects(of: "b") == 1)
            #expect(fleet.connects(of: "c") == 0)
            // The owner as every gateway reckons it from the claims in the order the broker took them (a stale claim,
            // such as a refresh of a's that crossed b's claim, changes nothing).
            let claims = fleet.broker.published(on: "gw/fleet/owner/strap").compactMap {
                try? FleetClaim.parse($0.payload)
            }
            #expect(FleetClaim.owners(reckonedFrom: claims) == ["a", "b"], "claims: \(claims)")
        }
    }

    @Test func aGatewayTheStrapIsPinnedToOwnsItAlthoughOthersHearItBetter() async throws {
        let fleet = try Fleet(fleet: "pinned: { strap: c }")
        try await fleet.run {
            try await owned(fleet, signals: ["a": -45, "b": -70, "c": -90])
            try await fleet.pass(.seconds(15))
            #expect(fleet.connects(of: "c") == 1)
            #expect(fleet.connects(of: "a") == 0)
            #expect(fleet.connects(of: "b") == 0)
            let claim = try #require(fleet.broker.retainedMessages["gw/fleet/owner/strap"])
            #expect(claim.payloadText.contains(#""pinned":true"#))
        }
    }

    @Test func aPassiveDeviceIsPublishedByOneGatewayAlone() async throws {
        let fleet = try Fleet()
        try await fleet.run {
            try await fleet.waitForTickLoops()
            for (id, rssi) in ["a": Int16(-80), "b": -50, "c": -65] {
                fleet[id].central.advertise(Fleet.tag, rssi: rssi)
            }
            try await fleet.advance {
                fleet.broker.published(on: "gw/tag/availability").contains { $0.payloadText == "online" }
            }
            // Its signal changes on every gateway, again and again: still only its owner speaks for it.
            for step in 0..<8 {
                for (id, rssi) in ["a": Int16(-80), "b": -50, "c": -65] {
                    fleet[id].central.advertise(Fleet.tag, rssi: rssi - Int16(step % 2) * 10)
                }
                try await fleet.pass(.seconds(6))
            }
            let publishers = fleet.broker.publications.filter { $0.message.topic.hasPrefix("gw/tag/") }.map(\.clientID)
            #expect(publishers.count > 1)
            #expect(Set(publishers) == ["b"])
            #expect(fleet.connects(of: "b") == 0)
        }
    }

    @Test func aRequestAddressedToOneGatewayIsAnsweredByItAlone() async throws {
        let fleet = try Fleet()
        try await fleet.run {
            for id in ["a", "b", "c"] {
                _ = try await fleet.broker.subscriptionLog.first { $0 == "\(id): gw/bridge/\(id)/request/+" }
            }
            try await fleet.user.publish(
                MQTTMessage(
                    topic: "gw/bridge/b/request/devices", text: #"{"transaction":"first"}"#, qos: .atLeastOnce))
            // Then one to each of the others: once they answer theirs, they have seen the first too.
            for id in ["a", "c"] {
                let mark = fleet.broker.publicationCount
                try await fleet.user.publish(
                    MQTTMessage(
                        topic: "gw/bridge/\(id)/request/devices", text: #"{"transaction":"second"}"#, qos: .atLeastOnce)
                )
                _ = try await fleet.broker.nextPublished(on: "gw/bridge/\(id)/response/devices", since: mark)
            }
            let answers = fleet.broker.publications.filter {
                $0.message.topic.contains("/response/") && $0.message.payloadText.contains(#""first""#)
            }
            #expect(answers.map(\.clientID) == ["b"])
            #expect(answers.map(\.message.topic) == ["gw/bridge/b/response/devices"])
            #expect(fleet.broker.published(on: "gw/bridge/response/#").isEmpty)
        }
    }

    @Test func aClaimThatDoesNotParseIsRefusedWholeAndTheDeviceStaysClaimable() async throws {
        let fleet = try Fleet(gatewayIDs: ["a"])
        try await fleet.run {
            try await fleet.user.publish(
                MQTTMessage(
                    topic: "gw/fleet/owner/strap", text: #"{"gateway":"x/y","term":1}"#, qos: .atLeastOnce, retain: true
                ))
            try await owned(fleet, signals: ["a": -60])
            let claim = try #require(fleet.broker.retainedMessages["gw/fleet/owner/strap"])
            #expect(claim.payloadText.contains(#""gateway":"a""#))
        }
    }
}
