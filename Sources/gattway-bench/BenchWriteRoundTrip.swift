import MQTTCore
import Mosquitto

/// Sequential `/set` writes to `fh0/cmd` (write with response on the simulator's echo characteristic ff02), each
/// timed from the publish to the `/set/result` the benchmark's subscriber receives.
struct BenchWriteRoundTrip {
    let world: BenchWorld

    func run(count: Int) async throws -> WriteRoundTripResult {
        let topic = "\(BenchWorld.base)/fh0/cmd/set"
        var latencies: [UInt64] = []
        latencies.reserveCapacity(count)
        var failures = 0
        for index in 0..<count {
            // Four distinct bytes per write, in the characteristic's hex codec.
            let value = UInt32(truncatingIfNeeded: index)
            let hex = String(value, radix: 16)
            let payload = String(repeating: "0", count: 8 - hex.count) + hex
            let sent = BenchProcStats.monotonicNanoseconds()
            try await world.subscriber.client.publish(MQTTMessage(topic: topic, text: payload, qos: .atLeastOnce))
            let result = try await world.subscriber.nextResult(timeout: .seconds(15))
            latencies.append(BenchProcStats.monotonicNanoseconds() - sent)
            if !result.contains("\"ok\":true") { failures += 1 }
        }
        let quantiles = BenchPercentiles.milliseconds(latencies, [0.5, 0.99, 1.0])
        return WriteRoundTripResult(
            count: count, failures: failures, p50: quantiles[0], p99: quantiles[1], max: quantiles[2])
    }
}
