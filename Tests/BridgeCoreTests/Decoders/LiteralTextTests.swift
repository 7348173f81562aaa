import BridgeCore
import Testing

/// Units and Home Assistant classes are literals compared and hashed by their bytes, as the strings they were.
@Suite struct LiteralTextTests {
    @Test func equalTextsAreEqualAndHashAlike() {
        let units: [LiteralText] = ["°C", "%", "hPa", "V", "%", "°C"]
        #expect(units[0] == units[5] && units[1] == units[4])
        #expect(units[0] != units[1] && units[2] != units[3])
        #expect(Set(units).count == 4)
        #expect(Set(units.map(\.description)) == ["°C", "%", "hPa", "V"])
    }

    /// A one-character literal may be kept as a scalar rather than at an address; it still equals the same text.
    @Test func aScalarLiteralEqualsTheSameText() {
        let scalar = LiteralText(unicodeScalarLiteral: "%")
        let text: LiteralText = "%"
        #expect(scalar == text && text == scalar)
        #expect(Set([scalar, text]).count == 1)
        #expect(scalar != "V")
    }

    @Test func optionalsCompareAsTheirTexts() {
        let measurement = DecodedMeasurement(name: "temperature", value: .number(21.5), unit: "°C")
        #expect(measurement.unit == "°C")
        #expect(measurement.deviceClass == nil)
        #expect(measurement.unit?.description == "°C")
    }
}
