import BridgeCore
import FleetSimulation
import Testing

@Suite struct FleetWorldTests {
    private static func smallFleet(seed: UInt64 = 5) -> FleetScenario {
        var scenario = FleetScenario()
        scenario.gateways = 12
        scenario.devices = 80
        scenario.seed = seed
        scenario.warmup = .seconds(120)
        scenario.measured = .seconds(900)
        scenario.killEvery = .seconds(90)
        scenario.restartAfter = .seconds(60)
        scenario.partitionEvery = .seconds(150)
        return scenario
    }

    /// One run with failures and one without, shared by the tests that read them.
    private static let withFailures = FleetWorld(smallFleet()).run()
    private static let withoutFailures: FleetOutcome = {
        var scenario = smallFleet()
        scenario.killEvery = nil
        scenario.partitionEvery = nil
        return FleetWorld(scenario).run()
    }()

    @Test func aRunIsReproducibleFromItsSeed() {
        func tiny(_ seed: UInt64) -> FleetScenario {
            var scenario = Self.smallFleet(seed: seed)
            scenario.gateways = 6
            scenario.devices = 30
            scenario.warmup = .seconds(60)
            scenario.measured = .seconds(300)
            return scenario
        }
        let first = FleetWorld(tiny(5)).run()
        let again = FleetWorld(tiny(5)).run()
        let other = FleetWorld(tiny(6)).run()
        #expect(first == again)
        #expect(first != other)
    }

    @Test func everyDeviceOfAKilledGatewayThatOthersHearIsTakenOverWithinTenSeconds() {
        let outcome = Self.withFailures
        #expect(outcome.kills >= 8)
        #expect(!outcome.takeoverAfterKill.isEmpty)
        #expect(outcome.takeoversMissing == 0)
        #expect(outcome.takeoverAfterKill.allSatisfy { $0 <= 10_000 })
        #expect(outcome.takeoverAfterWill.allSatisfy { $0 <= 4_000 })
    }

    @Test func twoOwnersNeverLastLongerThanAGatewayTakesToNoticeItLostTheBroker() {
        let outcome = Self.withFailures
        #expect(outcome.partitions >= 5)
        #expect(outcome.devicesOwnedSeveralTimesAtEnd == 0)
        // The isolated owner notices within 1.5 keepalives (7.5 s) and stops 1 s later.
        #expect(outcome.longestTwoOwnerMilliseconds <= 8_500)
    }

    @Test func theFleetEndsWithOneOwnerPerHeardDevice() {
        let outcome = Self.withoutFailures
        #expect(outcome.devicesHeardAtEnd > 50)
        #expect(outcome.devicesOwnedSeveralTimesAtEnd == 0)
        #expect(outcome.devicesOwnedOnceAtEnd == outcome.devicesHeardAtEnd)
        // Without failures, two owners never overlap: the new owner starts only after the old one's claim lost.
        #expect(outcome.twoOwnerEpisodes == 0)
    }

    @Test func hysteresisKeepsWanderingSignalsFromMovingOwnershipBackAndForth() {
        var scenario = Self.smallFleet()
        scenario.killEvery = nil
        scenario.partitionEvery = nil
        scenario.policy.margin = 0
        scenario.policy.hold = .zero
        let withoutHysteresis = FleetWorld(scenario).run()
        #expect(Self.withoutFailures.ownerChangesPerDeviceHour * 10 < withoutHysteresis.ownerChangesPerDeviceHour)
        #expect(Self.withoutFailures.ownerChangesPerDeviceHour < 2)
    }

    @Test func theBrokerCarriesAFewMessagesPerDevicePerMinute() {
        let outcome = Self.withFailures
        #expect(outcome.published > 0)
        #expect(outcome.publishedPerDevicePerMinute < 3)
    }
}
