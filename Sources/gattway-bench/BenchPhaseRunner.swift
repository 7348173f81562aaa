import TestWorld

/// Runs one notification phase: all devices notify at a total rate for a while, then stop; the phase ends when
/// every value the simulator sent has arrived or nothing more arrives.
struct BenchPhaseRunner {
    let world: any BenchPhaseWorld
    let path: SubscriptionPath
    let duration: Duration

    /// How long the subscriber may stay without progress after the simulator stopped before the rest counts as lost.
    static let drainIdle = Duration.seconds(3)
    /// The longest a phase's drain may take in all.
    static let drainLimit = Duration.seconds(60)

    func run(label: String, rate: Double) async throws -> NotificationPhaseResult {
        let pids = (relay: world.relay.pid, broker: await world.broker.pid ?? -1, simulator: world.simulator.pid)
        let before = try await world.counters()
        let seconds = Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
        world.subscriber.beginPhase(devices: world.devices, expected: min(2_000_000, Int(rate * seconds * 1.2)))
        let cpuBefore = cpu(pids)
        let hostBefore = HostCPUTimes.now()
        let wakesBefore = BenchProcStats.voluntarySwitches(pid: pids.relay)
        let start = ContinuousClock.now
        try await world.setRate(total: rate)
        try await Task.sleep(for: duration)
        try await world.setRate(total: 0)
        let after = try await world.counters()
        let sent = delta("notifications_sent", before, after)
        let dropped =
            delta("notify_dropped_eagain", before, after) + delta("notify_dropped_socket_error", before, after)
        try await drain(until: sent)
        let wall = (ContinuousClock.now - start)
        let wallSeconds = Double(wall.components.seconds) + Double(wall.components.attoseconds) / 1e18
        let cpuAfter = cpu(pids)
        let hostAfter = HostCPUTimes.now()
        let wakesAfter = BenchProcStats.voluntarySwitches(pid: pids.relay)
        guard let tally = world.subscriber.endPhase() else { throw BenchError("phase \(label) lost its tally") }
        let quantiles = BenchPercentiles.milliseconds(tally.latencies, [0.5, 0.99, 1.0])
        let afterWarmUp = BenchPercentiles.milliseconds(Array(tally.latencies[tally.warmUpCount...]), [0.99])
        let end = BenchPercentiles.milliseconds(Array(tally.latencies.suffix(max(1, tally.received / 20))), [0.5])
        let emitSpan = Double(tally.lastStamp &- tally.firstStamp) / 1e9
        let receiveSpan = Double(tally.lastReceive &- tally.firstReceive) / 1e9
        let relayCPU = cpuAfter.relay - cpuBefore.relay
        return NotificationPhaseResult(
            path: path, label: label, requestedRate: rate, sent: sent, simulatorDropped: dropped,
            received: tally.received, gaps: tally.gaps, outOfOrder: tally.outOfOrder, malformed: tally.malformed,
            emittedRate: emitSpan > 0 ? Double(tally.received) / emitSpan : 0,
            deliveredRate: receiveSpan > 0 ? Double(tally.received) / receiveSpan : 0,
            latencyP50: quantiles[0], latencyP99: quantiles[1], latencyMax: quantiles[2],
            latencyP99AfterWarmUp: afterWarmUp[0], latencyAtEnd: end[0],
            relayMicrosPerValue: tally.received > 0 ? relayCPU * 1e6 / Double(tally.received) : .nan,
            relayWakesPerValue: BenchProcStats.perValue(wakesBefore, wakesAfter, values: tally.received),
            relayCores: relayCPU / wallSeconds,
            brokerCores: (cpuAfter.broker - cpuBefore.broker) / wallSeconds,
            simulatorCores: (cpuAfter.simulator - cpuBefore.simulator) / wallSeconds,
            hostSteal: HostCPUTimes.stealShare(from: hostBefore, to: hostAfter))
    }

    private func cpu(_ pids: (relay: Int32, broker: Int32, simulator: Int32)) -> (
        relay: Double, broker: Double, simulator: Double
    ) {
        (
            BenchProcStats.cpuSeconds(pid: pids.relay) ?? .nan, BenchProcStats.cpuSeconds(pid: pids.broker) ?? .nan,
            BenchProcStats.cpuSeconds(pid: pids.simulator) ?? .nan
        )
    }

    private func delta(_ key: String, _ before: [String: Int], _ after: [String: Int]) -> Int {
        (after[key] ?? 0) - (before[key] ?? 0)
    }

    /// Polls the subscriber (external processes deliver; there is no event to await) until `expected` values
    /// arrived, or no progress for `drainIdle`, or `drainLimit` in all.
    private func drain(until expected: Int) async throws {
        let limit = ContinuousClock.now + Self.drainLimit
        var lastCount = -1
        var lastProgress = ContinuousClock.now
        while ContinuousClock.now < limit {
            let count = world.subscriber.receivedInPhase
            if count >= expected { return }
            if count != lastCount {
                lastCount = count
                lastProgress = ContinuousClock.now
            } else if ContinuousClock.now - lastProgress > Self.drainIdle {
                return
            }
            guard world.relay.isRunning else {
                throw BenchError("\(world.relay.name) exited: \(world.relay.logTail())")
            }
            try await Task.sleep(for: .milliseconds(20))
        }
    }
}

/// What a notification phase needs of its world: the relaying process under test (whose CPU is counted), the
/// broker and simulator (their shares are reported), the subscriber that tallies values, and the simulator's
/// rate control and counters.
protocol BenchPhaseWorld: Sendable {
    var devices: Int { get }
    var relay: BenchProcess { get }
    var broker: MosquittoBroker { get }
    var simulator: BlueZSimulatorProcess { get }
    var subscriber: BenchSubscriber { get }
    func counters() async throws -> [String: Int]
    func setRate(total: Double) async throws
}
