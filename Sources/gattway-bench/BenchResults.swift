/// Figures of one notification phase.
struct NotificationPhaseResult: Sendable {
    let path: SubscriptionPath
    let label: String
    let requestedRate: Double
    /// Values the simulator sent (notifications_sent) and dropped on a full socket (as bluetoothd does).
    let sent: Int
    let simulatorDropped: Int
    let received: Int
    let gaps: Int
    let outOfOrder: Int
    let malformed: Int
    /// Values per second between the first and the last emission stamp seen.
    let emittedRate: Double
    /// Values per second between the first and the last receipt.
    let deliveredRate: Double
    let latencyP50: Double
    let latencyP99: Double
    let latencyMax: Double
    /// p99 without the first 0.5 s (connection warm-up).
    let latencyP99AfterWarmUp: Double
    /// Median latency of the last 5 % of values: a backlog still growing at the end shows here.
    let latencyAtEnd: Double
    /// The relaying process's CPU time (all threads) over the phase ÷ values received, in µs (Gattway in `central`).
    let relayMicrosPerValue: Double
    /// The relaying process's voluntary context switches over the phase ÷ values received: how many times its
    /// threads slept and were woken per value (a single-threaded relay woken by each value: about 1).
    let relayWakesPerValue: Double
    /// Shares of one core over the phase's wall time.
    let relayCores: Double
    let brokerCores: Double
    let simulatorCores: Double
    /// The share of the machine's CPU time the hypervisor took over the phase (`HostCPUTimes`; NaN: unknown).
    let hostSteal: Double

    /// Every value sent arrived, once, in order.
    var lossless: Bool { gaps == 0 && outOfOrder == 0 && malformed == 0 && simulatorDropped == 0 && received == sent }

    /// Lossless and keeping up: no backlog of more than `sustainedBacklogLimit` at the end of the phase.
    var sustained: Bool { lossless && latencyAtEnd < Self.sustainedBacklogLimit }
    static let sustainedBacklogLimit = 50.0  // ms
}

/// The two ways Gattway can receive notifications from BlueZ.
enum SubscriptionPath: String, Sendable, CaseIterable {
    case acquireNotify = "AcquireNotify"
    case startNotify = "StartNotify"
}

/// Figures of one subscription path's run.
struct PathRunResult: Sendable {
    let path: SubscriptionPath
    /// Every attempt at saturation, the last one lossless when any was.
    var saturationAttempts: [NotificationPhaseResult] = []
    var paced: [NotificationPhaseResult] = []
    var peakResidentBytes: Int?
    var fallbackConfirmed: String = ""
    var write: WriteRoundTripResult?
}

/// `/set` → `/set/result` round trips.
struct WriteRoundTripResult: Sendable {
    let count: Int
    let failures: Int
    let p50: Double
    let p99: Double
    let max: Double
}

/// Percentiles of a list of nanosecond latencies, in milliseconds.
enum BenchPercentiles {
    static func milliseconds(_ values: [UInt64], _ quantiles: [Double]) -> [Double] {
        guard !values.isEmpty else { return quantiles.map { _ in .nan } }
        let sorted = values.sorted()
        return quantiles.map { quantile in
            let index = min(sorted.count - 1, Int((quantile * Double(sorted.count)).rounded(.up)) - 1)
            return Double(sorted[max(0, index)]) / 1_000_000
        }
    }
}
