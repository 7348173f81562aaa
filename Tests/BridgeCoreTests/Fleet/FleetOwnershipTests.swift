import BridgeCore
import Testing

@Suite struct FleetOwnershipTests {
    private static func gateway(_ name: String, slots: Int = 4, pins: [String: String] = [:]) -> FleetOwnership {
        FleetOwnership(gateway: name, connectionSlots: slots, pins: pins)
    }

    @Test func aVacantDeviceIsOwnedOnlyOnceTheClaimComesBackFromTheBroker() {
        var machine = Self.gateway("a")
        var now = FleetInstant(milliseconds: 0)
        #expect(machine.handle(.brokerConnected, now: now).isEmpty)
        #expect(
            machine.handle(.heard(device: "lock", kind: .connectable, rssi: -60), now: now) == [
                .subscribeClaim(device: "lock")
            ])
        // The retained claim may still be on its way: nothing is claimed before the settle time.
        #expect(machine.handle(.tick, now: now + .milliseconds(500)).withoutSightings.isEmpty)
        let claim = FleetClaim(gateway: "a", term: 1, rssi: -60)
        var published: [FleetAction] = []
        while published.isEmpty, now < FleetInstant(milliseconds: 10_000) {
            now = now + .milliseconds(500)
            published += machine.handle(.heard(device: "lock", kind: .connectable, rssi: -60), now: now)
            published += machine.handle(.tick, now: now).withoutSightings
        }
        #expect(published == [.publishClaim(device: "lock", claim: claim)])
        #expect(!machine.owns("lock"))
        #expect(
            machine.handle(.claimObserved(device: "lock", claim: claim), now: now) == [
                .connect(device: "lock"), .startPublishing(device: "lock"),
            ])
        #expect(machine.owns("lock"))
    }

    @Test func aChallengerBetterByLessThanTheMarginNeverClaims() {
        var broker = FleetTestBroker([Self.gateway("a"), Self.gateway("b")])
        broker.run(for: .seconds(10)) { _ in ["a": -70] }
        #expect(broker.owners(of: "lock") == ["a"])
        broker.run(for: .seconds(600)) { _ in ["a": -70, "b": -65] }
        #expect(broker.owners(of: "lock") == ["a"])
        #expect(broker.ownerChanges(of: "lock") == 0)
    }

    @Test func aChallengerBetterByTheMarginClaimsOnlyAfterTheHoldTime() {
        var broker = FleetTestBroker([Self.gateway("a"), Self.gateway("b")])
        broker.run(for: .seconds(10)) { _ in ["a": -70] }
        // Better by the margin for less than the hold time, then back: nothing moves.
        broker.run(for: .seconds(8)) { _ in ["a": -70, "b": -55] }
        broker.run(for: .seconds(30)) { _ in ["a": -70, "b": -75] }
        #expect(broker.owners(of: "lock") == ["a"])
        // Held for longer than the hold time: b takes over, once.
        let start = broker.now
        var movedAt: FleetInstant?
        while broker.now.since(start) < .seconds(40) {
            broker.run(for: .milliseconds(500)) { _ in ["a": -70, "b": -55] }
            if movedAt == nil, broker.owners(of: "lock") == ["b"] { movedAt = broker.now }
        }
        #expect(broker.owners(of: "lock") == ["b"])
        #expect(broker.ownerChanges(of: "lock") == 1)
        let held = movedAt.map { $0.since(start) }
        #expect(held.map { $0 >= FleetPolicy().hold } == true)
    }

    @Test func equalNoisySignalsDoNotFlap() {
        var broker = FleetTestBroker([Self.gateway("a"), Self.gateway("b"), Self.gateway("c")])
        var noise: UInt64 = 12345
        func sample() -> Int {
            noise = noise &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return -65 + Int((noise >> 33) % 9) - 4
        }
        broker.run(for: .seconds(3_600)) { _ in ["a": sample(), "b": sample(), "c": sample()] }
        #expect(broker.owners(of: "lock").count == 1)
        #expect(broker.ownerChanges(of: "lock") == 0)
    }

    @Test func aPinnedGatewayWinsOverAStrongerOneAndKeepsTheDevice() {
        let pins = ["lock": "far"]
        var broker = FleetTestBroker([Self.gateway("near", pins: pins), Self.gateway("far", pins: pins)])
        broker.run(for: .seconds(10)) { _ in ["near": -40] }
        #expect(broker.owners(of: "lock") == ["near"])
        broker.run(for: .seconds(120)) { _ in ["near": -40, "far": -85] }
        #expect(broker.owners(of: "lock") == ["far"])
        #expect(broker.retained["lock"]?.pinned == true)
        #expect(broker.ownerChanges(of: "lock") == 1)
    }

    @Test func aPinIsOnlyAPreferenceWhileThePinnedGatewayDoesNotHearTheDevice() {
        let pins = ["lock": "far"]
        var broker = FleetTestBroker([Self.gateway("near", pins: pins), Self.gateway("far", pins: pins)])
        broker.run(for: .seconds(30)) { _ in ["near": -60] }
        #expect(broker.owners(of: "lock") == ["near"])
    }

    @Test func anotherGatewayTakesOverWhenTheOwnersLastWillFires() {
        var broker = FleetTestBroker([Self.gateway("a"), Self.gateway("b")])
        broker.run(for: .seconds(20)) { _ in ["a": -50, "b": -60] }
        #expect(broker.owners(of: "lock") == ["a"])
        // a dies: the broker publishes its Last Will, and a hears nothing any more.
        broker.gateways["a"] = nil
        broker.send(.gatewayState(gateway: "a", online: false), to: "b")
        let willAt = broker.now
        var takenAt: FleetInstant?
        while broker.now.since(willAt) < .seconds(10) {
            broker.run(for: .milliseconds(500)) { _ in ["b": -60] }
            if takenAt == nil, broker.owners(of: "lock") == ["b"] { takenAt = broker.now }
        }
        #expect(broker.owners(of: "lock") == ["b"])
        #expect(broker.retained["lock"]?.gateway == "b")
        #expect(broker.retained["lock"]?.term == 2)
        // Within the settle time plus the takeover delay, far inside the 10 s the protocol promises.
        #expect(takenAt.map { $0.since(willAt) <= .seconds(3) } == true)
    }

    @Test func anOwnerThatLosesTheDeviceReleasesItAndAHearerTakesOver() {
        var broker = FleetTestBroker([Self.gateway("a"), Self.gateway("b")])
        broker.run(for: .seconds(20)) { _ in ["a": -50, "b": -60] }
        broker.send(.deviceLost(device: "lock"), to: "a")
        #expect(broker.retained["lock"] == FleetClaim.release(after: 1))
        broker.run(for: .seconds(5)) { _ in ["b": -60] }
        #expect(broker.owners(of: "lock") == ["b"])
        #expect(broker.log.contains { $0.gateway == "a" && $0.action == .disconnect(device: "lock") })
    }

    @Test func simultaneousClaimsResolveToOneOwnerEverywhere() {
        var a = Self.gateway("a")
        var b = Self.gateway("b")
        let now = FleetInstant(milliseconds: 0)
        _ = a.handle(.brokerConnected, now: now)
        _ = b.handle(.brokerConnected, now: now)
        _ = a.handle(.heard(device: "lock", kind: .connectable, rssi: -60), now: now)
        _ = b.handle(.heard(device: "lock", kind: .connectable, rssi: -60), now: now)
        let later = now + .seconds(3)
        _ = a.handle(.heard(device: "lock", kind: .connectable, rssi: -60), now: later)
        _ = b.handle(.heard(device: "lock", kind: .connectable, rssi: -60), now: later)
        _ = a.handle(.tick, now: later)
        _ = b.handle(.tick, now: later)
        let claimA = FleetClaim(gateway: "a", term: 1, rssi: -60)
        let claimB = FleetClaim(gateway: "b", term: 1, rssi: -60)
        // Both wait out their takeover delay (at most the spread plus the jitter) and claim in the same term.
        let due = later + FleetPolicy().takeoverSpread + FleetPolicy().takeoverJitter
        let aClaims =
            a.handle(.heard(device: "lock", kind: .connectable, rssi: -60), now: due) + a.handle(.tick, now: due)
        let bClaims =
            b.handle(.heard(device: "lock", kind: .connectable, rssi: -60), now: due) + b.handle(.tick, now: due)
        #expect(aClaims.withoutSightings == [.publishClaim(device: "lock", claim: claimA)])
        #expect(bClaims.withoutSightings == [.publishClaim(device: "lock", claim: claimB)])
        // Each sees its own claim first, then the other's: the opposite orders a broker may deliver them in.
        let aFirst = a.handle(.claimObserved(device: "lock", claim: claimA), now: due)
        let aSecond = a.handle(.claimObserved(device: "lock", claim: claimB), now: due)
        let bFirst = b.handle(.claimObserved(device: "lock", claim: claimB), now: due)
        let bSecond = b.handle(.claimObserved(device: "lock", claim: claimA), now: due)
        #expect(aFirst == [.connect(device: "lock"), .startPublishing(device: "lock")])
        // a wins the tie (equal signal, smaller id) and settles what the broker retains in a new term.
        #expect(aSecond == [.publishClaim(device: "lock", claim: FleetClaim(gateway: "a", term: 2, rssi: -60))])
        #expect(bFirst == [.connect(device: "lock"), .startPublishing(device: "lock")])
        #expect(bSecond == [.stopPublishing(device: "lock"), .disconnect(device: "lock")])
        #expect(a.owns("lock") && !b.owns("lock"))
    }

    @Test func aStaleClaimOfAnOlderTermIsIgnoredNotAnswered() {
        var broker = FleetTestBroker([Self.gateway("a"), Self.gateway("b")])
        broker.run(for: .seconds(20)) { _ in ["a": -50, "b": -60] }
        let term = broker.retained["lock"]!.term
        let published = broker.log.count
        broker.send(.claimObserved(device: "lock", claim: FleetClaim(gateway: "b", term: term - 1, rssi: -30)), to: "a")
        #expect(broker.log.count == published)
        #expect(broker.owners(of: "lock") == ["a"])
    }

    @Test func simultaneousClaimsOverTheTestBrokerLeaveOneOwner() {
        var broker = FleetTestBroker([Self.gateway("a"), Self.gateway("b"), Self.gateway("c")])
        broker.run(for: .seconds(60)) { _ in ["a": -60, "b": -60, "c": -60] }
        #expect(broker.owners(of: "lock").count == 1)
    }

    @Test func noGatewayOwnsMoreConnectableDevicesThanItHasSlots() {
        var broker = FleetTestBroker([Self.gateway("a", slots: 1), Self.gateway("b", slots: 1)])
        for _ in 0..<40 {
            broker.now = broker.now + .milliseconds(500)
            for device in ["lock", "strap", "scale"] {
                broker.send(.heard(device: device, kind: .connectable, rssi: -50), to: "a")
                broker.send(.heard(device: device, kind: .connectable, rssi: -70), to: "b")
            }
            for device in ["thermo1", "thermo2"] {
                broker.send(.heard(device: device, kind: .passive, rssi: -50), to: "a")
            }
            broker.send(.tick, to: "a")
            broker.send(.tick, to: "b")
        }
        #expect(broker.gateways["a"]!.ownedDevices.filter { !$0.hasPrefix("thermo") }.count == 1)
        #expect(broker.gateways["b"]!.ownedDevices.count == 1)
        #expect(broker.gateways["a"]!.ownedDevices.filter { $0.hasPrefix("thermo") }.count == 2)
        #expect(broker.gateways["a"]!.freeSlots == 0)
    }

    @Test func aGatewayThatLostTheBrokerStopsOwningAfterTheGrace() {
        var broker = FleetTestBroker([Self.gateway("a")])
        broker.run(for: .seconds(10)) { _ in ["a": -50] }
        #expect(broker.owners(of: "lock") == ["a"])
        broker.send(.brokerDisconnected, to: "a")
        broker.now = broker.now + .milliseconds(500)
        broker.send(.tick, to: "a")
        #expect(broker.owners(of: "lock") == ["a"])
        broker.now = broker.now + FleetPolicy().brokerLossGrace
        broker.send(.tick, to: "a")
        #expect(broker.owners(of: "lock") == [])
        // Back on the broker, its own retained claim is renewed in a new term before it acts as owner again.
        broker.send(.brokerConnected, to: "a")
        broker.run(for: .seconds(5)) { _ in ["a": -50] }
        #expect(broker.owners(of: "lock") == ["a"])
        #expect(broker.retained["lock"]?.term == 2)
    }

    @Test func anOwnerRefreshesItsClaimWhenItsSignalDriftsButNotOnEverySample() {
        var broker = FleetTestBroker([Self.gateway("a")])
        broker.run(for: .seconds(10)) { _ in ["a": -50] }
        let before = broker.log.filter { if case .publishClaim = $0.action { true } else { false } }.count
        broker.run(for: .seconds(60)) { _ in ["a": -50] }
        broker.run(for: .seconds(60)) { _ in ["a": -70] }
        let claims = broker.log.filter { if case .publishClaim = $0.action { true } else { false } }.count - before
        #expect(claims >= 1 && claims <= 3)
        #expect(broker.retained["lock"]?.rssi.map { $0 <= -65 } == true)
        #expect(broker.retained["lock"]?.term == 1)
    }

    @Test func aDeviceNotHeardForLongIsForgotten() {
        var broker = FleetTestBroker([Self.gateway("a"), Self.gateway("b")])
        broker.run(for: .seconds(10)) { _ in ["a": -50, "b": -60] }
        broker.run(for: .seconds(70)) { _ in ["a": -50] }
        #expect(broker.subscriptions["b"]?.contains("lock") == false)
        #expect(broker.gateways["b"]!.claim(of: "lock") == nil)
    }
}

extension [FleetAction] {
    /// Sightings are published on their own period; most tests look at the rest.
    var withoutSightings: [FleetAction] {
        filter { if case .publishSightings = $0 { false } else { true } }
    }
}
