import Polling

extension MosquittoClient {
    /// The callers suspended in `wait(for:)`, by id, with how many wait for each kind of reason.
    ///
    /// The loop resumes `.writeDrained` after every publish and `.inbound` after every received message, while
    /// long-lived waits for other reasons (a consumer's `.inbound`, a `.stopped`) are nearly always there: the
    /// counts make "nobody waits for this" a load instead of a walk over the table.
    struct PendingWaits {
        private var byID: [UInt64: PendingWait] = [:]
        private var counts = [Int](repeating: 0, count: WaitReason.kindCount)

        var isEmpty: Bool { byID.isEmpty }

        /// Whether anybody waits for `reason` (for `.suback`/`.unsuback`, for that very message id).
        func contains(_ reason: WaitReason) -> Bool {
            guard counts[reason.kind] > 0 else { return false }
            switch reason {
            case .suback, .unsuback: return byID.values.contains { $0.reason == reason }
            default: return true
            }
        }

        mutating func insert(_ wait: PendingWait, id: UInt64) {
            if let replaced = byID.updateValue(wait, forKey: id) {
                replaced.timeout?.cancel()
                counts[replaced.reason.kind] -= 1
            }
            counts[wait.reason.kind] += 1
        }

        /// Removes the wait and cancels its timeout.
        mutating func remove(_ id: UInt64) -> PendingWait? {
            guard let wait = byID.removeValue(forKey: id) else { return nil }
            wait.timeout?.cancel()
            counts[wait.reason.kind] -= 1
            return wait
        }

        /// Removes and returns the waits for `reason`, in no particular order.
        mutating func removeAll(for reason: WaitReason) -> [PendingWait] {
            guard contains(reason) else { return [] }
            return removeAll { $0 == reason }
        }

        /// Removes and returns the waits whose reason `matches`, in no particular order.
        mutating func removeAll(where matches: (WaitReason) -> Bool) -> [PendingWait] {
            let ids = byID.compactMap { matches($0.value.reason) ? $0.key : nil }
            return ids.compactMap { remove($0) }
        }

        /// The distinct reasons waited for.
        var reasons: Set<WaitReason> { Set(byID.values.map(\.reason)) }
    }
}

extension MosquittoClient.WaitReason {
    static let kindCount = 8

    /// An index per case, message ids aside.
    var kind: Int {
        switch self {
        case .publishSlot: 0
        case .writeDrained: 1
        case .allAcked: 2
        case .inbound: 3
        case .connected: 4
        case .stopped: 5
        case .suback: 6
        case .unsuback: 7
        }
    }
}
