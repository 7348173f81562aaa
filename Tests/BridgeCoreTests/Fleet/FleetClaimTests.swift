import BridgeCore
import Testing

@Suite struct FleetClaimTests {
    @Test func aHigherTermAlwaysWins() {
        let pinned = FleetClaim(gateway: "a", term: 4, rssi: -30, pinned: true)
        let later = FleetClaim(gateway: "b", term: 5, rssi: -90)
        #expect(later.supersedes(pinned))
        #expect(!pinned.supersedes(later))
        #expect(FleetClaim.release(after: 5).supersedes(later))
    }

    @Test func withinOneTermTheRankingIsTheSameWhicheverArrivesFirst() {
        let claims = [
            FleetClaim(gateway: "b", term: 3, rssi: -60),
            FleetClaim(gateway: "a", term: 3, rssi: -60),
            FleetClaim(gateway: "c", term: 3, rssi: -50),
            FleetClaim(gateway: "d", term: 3, rssi: -80, pinned: true),
            FleetClaim(gateway: nil, term: 3),
        ]
        // Every arrival order converges on the same winner: pinned, then signal, then the smaller id.
        for rotation in claims.indices {
            for order in [
                Array(claims[rotation...] + claims[..<rotation]),
                Array((claims[rotation...] + claims[..<rotation]).reversed()),
            ] {
                var current = order[0]
                for next in order.dropFirst() where next.supersedes(current) { current = next }
                #expect(current.gateway == "d")
            }
        }
        #expect(claims[1].supersedes(claims[0]))
        #expect(!claims[0].supersedes(claims[1]))
        #expect(claims[2].supersedes(claims[1]))
        #expect(claims[0].supersedes(claims[4]))
        #expect(!claims[4].supersedes(claims[0]))
    }

    @Test func aLaterMessageOfTheSameGatewayReplacesItsEarlierOne() {
        let first = FleetClaim(gateway: "a", term: 3, rssi: -50)
        let refreshed = FleetClaim(gateway: "a", term: 3, rssi: -70)
        #expect(refreshed.supersedes(first))
    }

    @Test func payloadsRoundTrip() throws {
        let claim = FleetClaim(gateway: "hall", term: 7, rssi: -61, pinned: true)
        #expect(
            String(decoding: claim.payload, as: UTF8.self) == #"{"gateway":"hall","pinned":true,"rssi":-61,"term":7}"#)
        #expect(try FleetClaim.parse(claim.payload) == claim)
        let release = FleetClaim.release(after: 7)
        #expect(String(decoding: release.payload, as: UTF8.self) == #"{"gateway":null,"pinned":false,"term":8}"#)
        #expect(try FleetClaim.parse(release.payload) == release)
        #expect(try FleetClaim.parse([]) == nil)
    }

    @Test(arguments: [
        #"{"gateway":"a/b","term":1}"#,
        #"{"gateway":"+","term":1}"#,
        #"{"gateway":"","term":1}"#,
        #"{"gateway":7,"term":1}"#,
        #"{"term":1}"#,
        #"{"gateway":"a","term":-1}"#,
        #"{"gateway":"a","term":1.5}"#,
        #"{"gateway":"a","term":9007199254740993}"#,
        #"{"gateway":"a","term":1,"rssi":300}"#,
        #"{"gateway":"a","term":1,"rssi":"-40"}"#,
        #"{"gateway":"a","term":1,"pinned":"yes"}"#,
        #"{"gateway":null,"term":1,"pinned":true}"#,
        #"[1,2]"#,
        #"{"gateway":"a","term":1"#,
        #"{"gateway":{"x":{"y":1}},"term":1}"#,
    ])
    func hostileClaimsAreRefused(_ text: String) {
        #expect(throws: FleetPayloadError.self) { try FleetClaim.parse(Array(text.utf8)) }
    }

    @Test func oversizeClaimsAreRefusedUnparsed() {
        let padding = String(repeating: " ", count: FleetClaim.maximumPayloadSize)
        #expect(throws: FleetPayloadError.self) {
            try FleetClaim.parse(Array(#"{"gateway":"a","term":1}"#.utf8) + Array(padding.utf8))
        }
    }

    @Test func sightingsListWhatIsHeardAndOwned() {
        let sightings = FleetSightings(
            gateway: "hall", freeSlots: 5,
            devices: [.init(device: "lock", rssi: -61, owned: true), .init(device: "thermo", rssi: -83, owned: false)])
        #expect(
            String(decoding: sightings.payload, as: UTF8.self)
                == #"{"devices":[{"device":"lock","owned":true,"rssi":-61},{"device":"thermo","owned":false,"rssi":-83}],"free_slots":5,"gateway":"hall"}"#
        )
    }

    @Test func topicsAreReadBackOnlyWhenTheyAreTheFleetsOwn() {
        let topics = FleetTopics(base: "home/ble")
        #expect(topics.owner("lock") == "home/ble/fleet/owner/lock")
        #expect(topics.device(ofOwnerTopic: "home/ble/fleet/owner/lock") == "lock")
        #expect(topics.device(ofOwnerTopic: "home/ble/fleet/owner/lock/x") == nil)
        #expect(topics.device(ofOwnerTopic: "other/fleet/owner/lock") == nil)
        #expect(topics.gateway(ofStateTopic: "home/ble/bridge/hall/state") == "hall")
        #expect(topics.gateway(ofStateTopic: "home/ble/bridge/a/b/state") == nil)
        #expect(topics.sightings("hall") == "home/ble/bridge/hall/sightings")
    }
}
