package import DequeModule

/// A bounded queue of values waiting to be sent to one subscriber, with the configured policy for a full queue.
package struct NotifyQueue: Sendable {
    package typealias Policy = PeripheralConfiguration.QueueFullPolicy

    package enum Offer: Equatable, Sendable {
        case queued
        /// Backpressure: nothing was queued; the producer must wait for room.
        case full
        /// Queued, but this many values (old or new) were dropped by the policy.
        case dropped(Int)
    }

    package let capacity: Int
    package let policy: Policy
    package private(set) var items: Deque<[UInt8]> = []

    package init(capacity: Int, policy: Policy) {
        self.capacity = max(1, capacity)
        self.policy = policy
    }

    package var count: Int { items.count }
    package var isEmpty: Bool { items.isEmpty }
    package var hasRoom: Bool { items.count < capacity }
    package var first: [UInt8]? { items.first }

    package mutating func offer(_ value: [UInt8]) -> Offer {
        switch policy {
        case .backpressure:
            guard hasRoom else { return .full }
            items.append(value)
            return .queued
        case .dropOldest:
            guard !hasRoom else {
                items.append(value)
                return .queued
            }
            items.removeFirst()
            items.append(value)
            return .dropped(1)
        case .dropNewest:
            guard !hasRoom else {
                items.append(value)
                return .queued
            }
            return .dropped(1)
        case .latest:
            // Only the most recent unsent value matters: it replaces whatever still waits.
            let replaced = items.count
            items.removeAll(keepingCapacity: true)
            items.append(value)
            return replaced == 0 ? .queued : .dropped(replaced)
        }
    }

    /// Offers `value` while the first value is being sent. Under `drop_oldest` and `latest` the policy applies to
    /// the values waiting behind it: the one being sent stays first until it is removed as sent (the queue then
    /// holds at most one more than its capacity). Otherwise the same as ``offer(_:)``.
    package mutating func offerBehindFirst(_ value: [UInt8]) -> Offer {
        guard policy == .dropOldest || policy == .latest, let sending = items.first else { return offer(value) }
        items.removeFirst()
        let result = offer(value)
        items.prepend(sending)
        return result
    }

    package mutating func removeFirst() { items.removeFirst() }
    package mutating func removeAll() { items.removeAll() }
}
