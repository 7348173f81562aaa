import HeapModule

/// Events ordered by time, and by scheduling order within the same millisecond, so runs are reproducible.
package struct SimulationQueue<Event> {
    private struct Entry: Comparable {
        let time: Int64
        let sequence: UInt64
        let event: Event

        static func < (lhs: Entry, rhs: Entry) -> Bool { (lhs.time, lhs.sequence) < (rhs.time, rhs.sequence) }
        static func == (lhs: Entry, rhs: Entry) -> Bool { (lhs.time, lhs.sequence) == (rhs.time, rhs.sequence) }
    }

    private var heap = Heap<Entry>()
    private var sequence: UInt64 = 0

    package init() {}

    package var nextTime: Int64? { heap.min?.time }
    package var count: Int { heap.count }

    package mutating func schedule(_ event: Event, at time: Int64) {
        sequence += 1
        heap.insert(Entry(time: time, sequence: sequence, event: event))
    }

    package mutating func popNext() -> (time: Int64, event: Event)? {
        guard let entry = heap.popMin() else { return nil }
        return (entry.time, entry.event)
    }
}
