import TestWorld
import Testing

/// Reading the machine's steal time from /proc/stat, as the benchmarks do around each phase.
@Suite struct HostCPUTimesTests {
    @Test func readsTheFirstEightFieldsOfTheCPULineOnly() throws {
        let text = """
            cpu  2626290 7 529022 5155349 35595 3 49921 122593 900 11
            cpu0 1179803 0 239121 2754399 4333 0 21810 60073 0 0
            intr 1 2 3
            """
        let times = try #require(HostCPUTimes.parse(procStat: text))
        #expect(times.steal == 122_593)
        // guest and guest_nice (900, 11) are already in user and nice.
        #expect(times.total == 2_626_290 + 7 + 529_022 + 5_155_349 + 35_595 + 3 + 49_921 + 122_593)
    }

    @Test func refusesATextWithoutAFullCPULine() {
        #expect(HostCPUTimes.parse(procStat: "cpu0 1 2 3 4 5 6 7 8\n") == nil)
        #expect(HostCPUTimes.parse(procStat: "cpu  1 2 3 4 5 6 7\n") == nil)
        #expect(HostCPUTimes.parse(procStat: "cpu  1 2 3 4 5 6 7 x\n") == nil)
    }

    @Test func stealShareIsTheStolenPartOfTheTicksBetweenTwoReadings() throws {
        let before = HostCPUTimes(total: 1_000, steal: 10)
        let after = HostCPUTimes(total: 1_200, steal: 40)
        #expect(try #require(after.stealShare(since: before)) == 0.15)
        #expect(before.stealShare(since: before) == nil)
        #expect(before.stealShare(since: after) == nil)
    }

    @Test func aMissingReadingGivesNoShareToPrint() {
        let before = HostCPUTimes(total: 1_000, steal: 10)
        let after = HostCPUTimes(total: 1_200, steal: 40)
        #expect(HostCPUTimes.stealShare(from: before, to: after) == 0.15)
        #expect(HostCPUTimes.stealShare(from: nil, to: after).isNaN)
        #expect(HostCPUTimes.stealShare(from: before, to: nil).isNaN)
        #expect(HostCPUTimes.stealShare(from: after, to: before).isNaN)
    }

    @Test func thisMachineHasACPULine() throws {
        let first = try #require(HostCPUTimes.now())
        #expect(first.total > 0)
        #expect(first.steal <= first.total)
    }
}
