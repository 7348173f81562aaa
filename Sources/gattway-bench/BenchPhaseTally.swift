/// What the benchmark's subscriber saw during one phase: order, losses and latency of the seq+timestamp values.
struct BenchPhaseTally: Sendable {
    /// The next sequence number expected from each device (the simulator restarts at 0 for every phase).
    private var nextSequence: [UInt32]
    private(set) var received = 0
    /// Sequence numbers skipped (a later one arrived first): lost unless they show up late.
    private(set) var gaps = 0
    /// Values older than one already received (late or duplicated).
    private(set) var outOfOrder = 0
    /// Payloads that are not 12 bytes of seq + timestamp, or from a device outside the phase.
    private(set) var malformed = 0
    /// Emission-to-receipt latencies in nanoseconds, in arrival order.
    private(set) var latencies: [UInt64] = []
    private(set) var firstReceive: UInt64 = 0
    private(set) var lastReceive: UInt64 = 0
    /// Values received in the first `warmUpNanoseconds` of the phase (latencies[0..<warmUpCount]).
    private(set) var warmUpCount = 0
    static let warmUpNanoseconds: UInt64 = 500_000_000
    private(set) var firstStamp = UInt64.max
    private(set) var lastStamp: UInt64 = 0

    init(devices: Int, expected: Int) {
        nextSequence = Array(repeating: 0, count: devices)
        latencies.reserveCapacity(expected)
    }

    /// Records one value of device `device`, received at `now` (CLOCK_MONOTONIC ns).
    mutating func record(device: Int, payload: [UInt8], now: UInt64) {
        guard device >= 0, device < nextSequence.count, payload.count == 12 else {
            malformed += 1
            return
        }
        let sequence = payload.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: 0, as: UInt32.self) }.littleEndian
        let stamp = payload.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: 4, as: UInt64.self) }.littleEndian
        let expected = nextSequence[device]
        if sequence == expected {
            nextSequence[device] = sequence &+ 1
        } else if sequence > expected {
            gaps += Int(sequence - expected)
            nextSequence[device] = sequence &+ 1
        } else {
            outOfOrder += 1
        }
        if received == 0 { firstReceive = now }
        received += 1
        lastReceive = now
        if now - firstReceive < Self.warmUpNanoseconds { warmUpCount = received }
        firstStamp = min(firstStamp, stamp)
        lastStamp = max(lastStamp, stamp)
        // A stamp after `now` would be a clock mix-up; count it as zero latency rather than wrap around.
        latencies.append(now >= stamp ? now - stamp : 0)
    }
}
