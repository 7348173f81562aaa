import BridgeCore
import Testing

/// `peripheral.stall_limit`: how long a notification subscriber may keep others waiting.
@Suite struct PeripheralStallLimitConfigurationTests {
    private func configuration(_ stallLimit: String) throws -> BridgeConfiguration {
        try BridgeConfiguration(
            yaml: """
                mqtt: { url: "mqtt://localhost" }
                peripheral: { \(stallLimit) services: [{ uuid: "180F", characteristics: [{ uuid: "2A19", flags: [notify], source_topic: home/battery }] }] }
                """)
    }

    @Test func withoutOneTheStallLimitIsTenSeconds() throws {
        #expect(try configuration("").peripheral?.stallLimit == .seconds(10))
    }

    @Test func aStallLimitInSecondsIsKept() throws {
        #expect(try configuration("stall_limit: 2.5,").peripheral?.stallLimit == .milliseconds(2500))
    }

    @Test(arguments: ["0", "-1", "100000"])
    func aStallLimitOutOfRangeIsRefusedAtItsPath(value: String) {
        #expect {
            _ = try configuration("stall_limit: \(value),")
        } throws: { error in
            (error as? ConfigurationErrors)?.errors.map(\.path) == ["peripheral.stall_limit"]
        }
    }
}
