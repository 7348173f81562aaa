package import BluetoothCore

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
        /// The how-manyth acceptance this was: the smallest is the least recently accepted device.
        var acceptance: UInt64
    }

    private let modulus: UInt64
    private let window: UInt64
    private let resetAfter: Duration
    private let capacity: Int
    private var last: [BluetoothAddress: Last] = [:]
    /// With a capacity of one (a deduplicator per device) the one device remembered, held here instead of in
    /// `last`: hashing its address twice per advertisement cost more than the rest of the check.
    private var alone: (address: BluetoothAddress, last: Last)?
    private var acceptances: UInt64 = 0

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
    package var count: Int { capacity == 1 ? (alone == nil ? 0 : 1) : last.count }

    /// Whether `packetID` from `address` at `now` is new; a new id is remembered as the device's last.
    // Specialized here for the bridge's clock and exported: the bridge calls this per advertisement from another
    // module, which would otherwise go through generic metadata lookups on every call.
    @_specialize(exported:true,where Instant == BridgeClock.Instant)
    package mutating func accept(
        packetID: UInt32, from address: BluetoothAddress, at now: Instant
    ) -> Bool {
        let id = UInt64(packetID) % modulus
        if capacity == 1 {
            // Another device replaces the one remembered, as the least recently accepted would be forgotten.
            let previous = alone.flatMap { $0.address == address ? $0.last : nil }
            guard isNew(id, after: previous, at: now) else { return false }
            acceptances &+= 1
            alone = (address, Last(id: id, at: now, acceptance: acceptances))
            return true
        }
        let previous = last[address]
        guard isNew(id, after: previous, at: now) else { return false }
        if previous == nil, last.count >= capacity { forgetLeastRecentlyAccepted() }
        acceptances &+= 1
        last[address] = Last(id: id, at: now, acceptance: acceptances)
        return true
    }

    /// Whether `id` is ahead of the device's last accepted one by less than the window, or the device has none
    /// recent enough to compare with.
    private func isNew(_ id: UInt64, after previous: Last?, at now: Instant) -> Bool {
        guard let previous, previous.at.duration(to: now) < resetAfter else { return true }
        let ahead = (id + modulus - previous.id) % modulus
        return ahead > 0 && ahead < window
    }

    /// One pass over the table, only when a newcomer finds it full: a device heard again costs a lookup, never a
    /// reordering of the others.
    private mutating func forgetLeastRecentlyAccepted() {
        guard let oldest = last.min(by: { $0.value.acceptance < $1.value.acceptance })?.key else { return }
        last[oldest] = nil
    }
}
