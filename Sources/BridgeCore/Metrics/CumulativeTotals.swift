/// Turns running totals read from elsewhere (a client's statistics) into increments for a counter, so that they
/// are exported as counters that only go up, not as gauges.
///
/// A total lower than the last one read means its source started again from zero (a new client): all of it is new.
package struct CumulativeTotals: Sendable {
    private var last: [String: Int] = [:]

    package init() {}

    /// How much `total` grew since it was last read under `key`.
    package mutating func increment(for key: String, total: Int) -> Int {
        let previous = last[key] ?? 0
        last[key] = total
        return total >= previous ? total - previous : max(0, total)
    }
}
