package import BluetoothCore
import OrderedCollections

/// Tells a new packet from a repeat or a replay, per device, by its wrapping packet id.
///
/// Advertisers repeat each packet several times and proxies reorder them. A packet is new when its id is ahead of
/// the last accepted one by less than `window` (modulo `modulus`, so 255 → 0 is ahead), or when the device has
/// been silent for `resetAfter` (it may have restarted and counted again from zero). Bounded: at most `capacity`
/// devices are remembered; the least recently accepted is forgotten first, so random addresses cannot grow it.
/// Time is passed in, as instants of whichever clock the caller runs on.
package struct PacketIDDeduplicator<Instant: InstantProtocol>: Sendable where Instant.Duration == Duration {
    private struct Last: Sendable {
        var id: UInt64
        var at: Instant
    }

    private let modulus: UInt64
    private let window: UInt64
    private let resetAfter: Duration
    private let capacity: Int
    private var last: OrderedDictionary<BluetoothAddress, Last> = [:]

    /// A deduplicator; BTHome's 8-bit packet id uses the defaults.
    /// - Parameters:
    ///   - modulus: how many distinct ids there are (256 for an 8-bit id).
    ///   - window: how far ahead an id may be and still count as new.
    ///   - resetAfter: silence after which any id is accepted.
    ///   - capacity: the most devices remembered.
    package init(modulus: UInt64 = 256, window: UInt64 = 64, resetAfter: Duration = .seconds(4), capacity: Int = 1024) {
        self.modulus = max(modulus, 2)
        self.window = min(max(window, 1), max(modulus, 2) - 1)
        self.resetAfter = resetAfter
        self.capacity = max(capacity, 1)
    }

    /// How many devices are remembered.
    package var count: Int { last.count }

    /// Whether `packetID` from `address` at `now` is new; a new id is remembered as the device's last.
    package mutating func accept(
        packetID: UInt32, from address: BluetoothAddress, at now: Instant
    ) -> Bool {
        let id = UInt64(packetID) % modulus
        let index = last.index(forKey: address)
        if let index, last.values[index].at.duration(to: now) < resetAfter {
            let ahead = (id + modulus - last.values[index].id) % modulus
            guard ahead > 0, ahead < window else { return false }
        }
        if let index, index == last.count - 1 {
            // Already the most recently accepted (always, for a device's own deduplicator): updated in place, as
            // moving it to the end would leave it where it is at the cost of a removal and an insertion.
            last.values[index] = Last(id: id, at: now)
            return true
        }
        if let index { last.remove(at: index) }
        if last.count >= capacity { last.removeFirst() }
        last[address] = Last(id: id, at: now)
        return true
    }
}
