import BridgeCore
import Testing

/// Names of repeated measurements in one advertisement: the first keeps its name, the next get `_2`, `_3`, …
@Suite struct MeasurementNamerTests {
    @Test func repeatsGetANumberedSuffixPerName() {
        var namer = MeasurementNamer()
        let names = ["button", "temperature", "button", "button", "temperature", "humidity"].map { namer.name($0) }
        #expect(names == ["button", "temperature", "button_2", "button_3", "temperature_2", "humidity"])
    }

    /// More distinct names than are kept in place: the later ones are counted as well as the first.
    @Test func namesBeyondTheFirstEightAreCountedToo() {
        var namer = MeasurementNamer()
        let bases = (1...12).map { "m\($0)" }
        let first = bases.map { namer.name($0) }
        let second = bases.reversed().map { namer.name($0) }
        let third = [namer.name("m12"), namer.name("m1")]
        #expect(first == bases)
        #expect(second == bases.reversed().map { "\($0)_2" })
        #expect(third == ["m12_3", "m1_3"])
    }
}
