import BridgeCore
import Testing

/// JSON from MQTT is bounded in depth, width and total values, so no payload builds a large tree.
@Suite struct JSONLimitsTests {
    private func parses(_ text: String, _ limits: JSONLimits = .commands) -> Bool {
        (try? JSONValue(parsing: Array(text.utf8), limits: limits)) != nil
    }

    @Test func widthIsBoundedForArraysAndObjects() {
        let limits = JSONLimits(maximumDepth: 8, maximumWidth: 3, maximumValues: 100)
        #expect(parses("[1,2,3]", limits))
        #expect(!parses("[1,2,3,4]", limits))
        #expect(parses(#"{"a":1,"b":2,"c":3}"#, limits))
        #expect(!parses(#"{"a":1,"b":2,"c":3,"d":4}"#, limits))
    }

    @Test func totalValuesAreBoundedAcrossContainers() {
        let limits = JSONLimits(maximumDepth: 8, maximumWidth: 100, maximumValues: 10)
        #expect(parses("[[1,2,3],[4,5,6]]", limits))  // 9 values
        #expect(!parses("[[1,2,3],[4,5,6],[7]]", limits))
        #expect(throws: JSONParseError.self) {
            try JSONValue(parsing: Array("[[1,2,3],[4,5,6],[7]]".utf8), limits: limits)
        }
    }

    @Test func depthIsStillBounded() {
        #expect(!parses(String(repeating: "[", count: 33) + String(repeating: "]", count: 33)))
        #expect(parses(String(repeating: "[", count: 32) + String(repeating: "]", count: 32)))
    }

    @Test func theCommandLimitsRefuseAHugeArrayEarly() {
        let huge = "{\"a\":[0" + String(repeating: ",0", count: 100_000) + "]}"
        let error = #expect(throws: JSONParseError.self) { try JSONValue(parsing: Array(huge.utf8)) }
        // Parsing stops at the limit, long before the end of the payload.
        #expect((error?.offset ?? .max) < 1_000)
    }
}
