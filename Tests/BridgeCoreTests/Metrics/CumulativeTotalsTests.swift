import BridgeCore
import Testing

@Suite struct CumulativeTotalsTests {
    @Test func totalsBecomeIncrementsPerKey() {
        var totals = CumulativeTotals()
        #expect(totals.increment(for: "a", total: 5) == 5)
        #expect(totals.increment(for: "a", total: 5) == 0)
        #expect(totals.increment(for: "a", total: 12) == 7)
        #expect(totals.increment(for: "b", total: 3) == 3)
        // The source started again from zero: what it counted since is new.
        #expect(totals.increment(for: "a", total: 2) == 2)
        #expect(totals.increment(for: "a", total: 4) == 2)
    }
}
