import ArgumentParser
import BridgeCore
import FleetSimulation
import Foundation
import FoundationInternationalization

/// The fleet ownership protocol at scale, by simulation: many gateways running the real state machine over a
/// simulated broker, with signals that wander, gateways killed and cut off from the broker.
struct FleetBenchmark: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "fleet",
        abstract:
            "Simulate the fleet ownership protocol: convergence after failures, flapping, two owners, broker load."
    )

    @Option(help: "Gateways.") var gateways = 1_000
    @Option(help: "Devices.") var devices = 10_000
    @Option(help: "Simulated minutes measured (after a 5-minute warm-up).") var minutes = 30
    @Option(help: "Seed: the same seed gives the same run.") var seed: UInt64 = 1
    @Option(help: "Seconds between gateway kills (0: none).") var killEvery = 60
    @Option(help: "Seconds between broker partitions of one gateway (0: none).") var partitionEvery = 120

    func run() {
        var scenario = FleetScenario()
        scenario.gateways = gateways
        scenario.devices = devices
        scenario.measured = .seconds(minutes * 60)
        scenario.seed = seed
        scenario.killEvery = killEvery > 0 ? .seconds(killEvery) : nil
        scenario.partitionEvery = partitionEvery > 0 ? .seconds(partitionEvery) : nil
        let started = ContinuousClock.now
        let outcome = FleetWorld(scenario).run()
        let elapsed = ContinuousClock.now - started
        for line in FleetBenchmark.report(outcome, scenario: scenario) { print(line) }
        print("simulated in \(elapsed.formatted(.units(allowed: [.seconds], fractionalPart: .show(length: 1))))")
    }

    static func report(_ outcome: FleetOutcome, scenario: FleetScenario) -> [String] {
        func milliseconds(_ samples: [Int64], _ fraction: Double) -> String {
            FleetOutcome.percentile(samples, fraction).map { String(format: "%.1f s", Double($0) / 1_000) } ?? "-"
        }
        func number(_ value: Double) -> String { String(format: "%.3f", value) }
        let minutes = Double(outcome.measuredMilliseconds) / 60_000
        return [
            "fleet: \(outcome.gateways) gateways, \(outcome.devices) devices (\(Int(scenario.connectableShare * 100)) % connectable, "
                + "\(scenario.connectionSlots) slots each), \(Int(minutes)) simulated minutes, seed \(scenario.seed)",
            "failures: \(outcome.kills) gateways killed (restarted after \(scenario.restartAfter)), "
                + "\(outcome.partitions) cut off from the broker for \(scenario.partitionLength); keepalive \(scenario.keepalive)",
            "takeover after a kill (\(outcome.takeoverAfterKill.count) devices): p50 \(milliseconds(outcome.takeoverAfterKill, 0.5)), "
                + "p99 \(milliseconds(outcome.takeoverAfterKill, 0.99)), max \(milliseconds(outcome.takeoverAfterKill, 1))",
            "takeover after the Last Will: p50 \(milliseconds(outcome.takeoverAfterWill, 0.5)), "
                + "p99 \(milliseconds(outcome.takeoverAfterWill, 0.99)), max \(milliseconds(outcome.takeoverAfterWill, 1)); "
                + "never taken over: \(outcome.takeoversMissing)",
            "ownership changes per device-hour: \(number(outcome.ownerChangesPerDeviceHour)) "
                + "(\(number(outcome.ownerChangesWithoutFailurePerDeviceHour)) with the previous owner alive and on the broker)",
            "two owners: \(outcome.twoOwnerEpisodes) times, \(String(format: "%.1f", Double(outcome.twoOwnerMilliseconds) / 1_000)) s in all, "
                + "longest \(String(format: "%.1f", Double(outcome.longestTwoOwnerMilliseconds) / 1_000)) s",
            "broker: \(number(outcome.publishedPerDevicePerMinute)) messages in and \(number(outcome.deliveredPerDevicePerMinute)) out "
                + "per device per minute (claims \(outcome.claimsPublished), releases \(outcome.releasesPublished), "
                + "sightings \(outcome.sightingsPublished), of \(outcome.published) in)",
            "at the end: \(outcome.devicesHeardAtEnd) devices heard, \(outcome.devicesOwnedOnceAtEnd) with one owner, "
                + "\(outcome.devicesOwnedSeveralTimesAtEnd) with more",
        ]
    }
}
