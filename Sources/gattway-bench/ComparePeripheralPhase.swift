import DBus
import Foundation
import MQTTCore
import Mosquitto
import TestWorld

/// One paced phase of the local peripheral's path: the benchmark publishes seq+timestamp values to the source topic
/// at a rate (QoS 0), the peripheral under test notifies them, and the simulator's remote central receives them.
/// The central's receipt times (its CLOCK_MONOTONIC, the clock of the publisher's stamp) are drained with
/// `GetReceivedStamped` while the phase runs, so latency carries no D-Bus hop per value.
struct ComparePeripheralPhase {
    let stage: CompareStage
    let peripheral: BenchProcess
    let publisher: MosquittoClient
    let central: String
    let way: SubscriptionPath
    let seconds: Double

    /// How often the central's received values are drained during a phase.
    static let pollInterval = Duration.milliseconds(20)

    func run(label: String, rate: Double) async throws -> NotificationPhaseResult {
        let count = max(1, Int((rate * seconds).rounded()))
        _ = try await takeReceived()  // values of an earlier phase or probe, should any remain
        var tally = BenchPhaseTally(devices: 1, expected: count)
        let pids = (peripheral: peripheral.pid, broker: await stage.broker.pid ?? -1, simulator: stage.simulator.pid)
        let cpuBefore = cpu(pids)
        let hostBefore = HostCPUTimes.now()
        let wakesBefore = BenchProcStats.voluntarySwitches(pid: pids.peripheral)
        let before = try await stage.counters()
        let start = ContinuousClock.now
        let publisher = self.publisher
        let topic = CompareStage.peripheralTopic
        let publishing = Task { try await Self.publishPaced(publisher, topic: topic, count: count, rate: rate) }
        let publishEnd = start + .nanoseconds(Int64(Double(count) / rate * 1e9))
        do {
            while ContinuousClock.now < publishEnd {
                try await Task.sleep(for: Self.pollInterval)
                try await record(into: &tally)
            }
            try await publishing.value
        } catch {
            publishing.cancel()
            throw error
        }
        try await drain(into: &tally, until: count)
        let wall = ContinuousClock.now - start
        let wallSeconds = Double(wall.components.seconds) + Double(wall.components.attoseconds) / 1e18
        let cpuAfter = cpu(pids)
        let hostAfter = HostCPUTimes.now()
        let wakesAfter = BenchProcStats.voluntarySwitches(pid: pids.peripheral)
        let after = try await stage.counters()
        let linkDrops = (after["central.link_full_drops"] ?? 0) - (before["central.link_full_drops"] ?? 0)
        let quantiles = BenchPercentiles.milliseconds(tally.latencies, [0.5, 0.99, 1.0])
        let afterWarmUp = BenchPercentiles.milliseconds(Array(tally.latencies[tally.warmUpCount...]), [0.99])
        let end = BenchPercentiles.milliseconds(Array(tally.latencies.suffix(max(1, tally.received / 20))), [0.5])
        let emitSpan = Double(tally.lastStamp &- tally.firstStamp) / 1e9
        let receiveSpan = Double(tally.lastReceive &- tally.firstReceive) / 1e9
        let peripheralCPU = cpuAfter.peripheral - cpuBefore.peripheral
        return NotificationPhaseResult(
            path: way, label: label, requestedRate: rate, sent: count, simulatorDropped: linkDrops,
            received: tally.received, gaps: tally.gaps, outOfOrder: tally.outOfOrder, malformed: tally.malformed,
            emittedRate: emitSpan > 0 ? Double(tally.received) / emitSpan : 0,
            deliveredRate: receiveSpan > 0 ? Double(tally.received) / receiveSpan : 0,
            latencyP50: quantiles[0], latencyP99: quantiles[1], latencyMax: quantiles[2],
            latencyP99AfterWarmUp: afterWarmUp[0], latencyAtEnd: end[0],
            relayMicrosPerValue: tally.received > 0 ? peripheralCPU * 1e6 / Double(tally.received) : .nan,
            relayWakesPerValue: BenchProcStats.perValue(wakesBefore, wakesAfter, values: tally.received),
            relayCores: peripheralCPU / wallSeconds,
            brokerCores: (cpuAfter.broker - cpuBefore.broker) / wallSeconds,
            simulatorCores: (cpuAfter.simulator - cpuBefore.simulator) / wallSeconds,
            hostSteal: HostCPUTimes.stealShare(from: hostBefore, to: hostAfter))
    }

    /// Publishes `count` values on an absolute schedule of `rate` per second: each slot's value is stamped when it is
    /// handed to the client, and a late wake-up publishes every slot that came due (so the rate holds on average).
    private static func publishPaced(_ client: MosquittoClient, topic: String, count: Int, rate: Double)
        async throws
    {
        let start = ContinuousClock.now
        for sequence in 0..<count {
            let due = start + .nanoseconds(Int64(Double(sequence) / rate * 1e9))
            if ContinuousClock.now < due { try await Task.sleep(until: due, clock: .continuous) }
            try await client.publish(MQTTMessage(topic: topic, payload: payload(sequence), qos: .atMostOnce))
        }
    }

    /// u32 sequence LE + u64 CLOCK_MONOTONIC ns LE: the simulator's seq-timestamp pattern, so one tally reads both.
    private static func payload(_ sequence: Int) -> [UInt8] {
        var bytes = [UInt8]()
        bytes.reserveCapacity(12)
        withUnsafeBytes(of: UInt32(truncatingIfNeeded: sequence).littleEndian) { bytes.append(contentsOf: $0) }
        withUnsafeBytes(of: BenchProcStats.monotonicNanoseconds().littleEndian) { bytes.append(contentsOf: $0) }
        return bytes
    }

    /// The central's received values since the last call: (receipt ns, value).
    private func takeReceived() async throws -> [(UInt64, [UInt8])] {
        let reply = try await stage.centralCall(
            "GetReceivedStamped", [.string(central), .string(PeripheralBenchmark.tx), .uint32(0)])
        guard let items = reply.first?.arrayElements else {
            throw BenchError("GetReceivedStamped answered \(reply)")
        }
        return try items.map { item in
            guard let fields = item.structureFields, fields.count == 2, let stamp = fields[0].uint64,
                let value = fields[1].bytes
            else { throw BenchError("GetReceivedStamped: unexpected item \(item)") }
            return (stamp, value)
        }
    }

    private func record(into tally: inout BenchPhaseTally) async throws {
        for (stamp, value) in try await takeReceived() { tally.record(device: 0, payload: value, now: stamp) }
        guard peripheral.isRunning else { throw BenchError("\(peripheral.name) exited: \(peripheral.logTail())") }
    }

    /// Drains until `expected` values arrived, or none for `BenchPhaseRunner.drainIdle`, or
    /// `BenchPhaseRunner.drainLimit` in all (the central is polled: there is no event to await).
    private func drain(into tally: inout BenchPhaseTally, until expected: Int) async throws {
        let limit = ContinuousClock.now + BenchPhaseRunner.drainLimit
        var lastCount = tally.received
        var lastProgress = ContinuousClock.now
        while tally.received < expected && ContinuousClock.now < limit {
            try await Task.sleep(for: Self.pollInterval)
            try await record(into: &tally)
            if tally.received != lastCount {
                lastCount = tally.received
                lastProgress = ContinuousClock.now
            } else if ContinuousClock.now - lastProgress > BenchPhaseRunner.drainIdle {
                return
            }
        }
    }

    private func cpu(_ pids: (peripheral: Int32, broker: Int32, simulator: Int32)) -> (
        peripheral: Double, broker: Double, simulator: Double
    ) {
        (
            BenchProcStats.cpuSeconds(pid: pids.peripheral) ?? .nan,
            BenchProcStats.cpuSeconds(pid: pids.broker) ?? .nan,
            BenchProcStats.cpuSeconds(pid: pids.simulator) ?? .nan
        )
    }
}
