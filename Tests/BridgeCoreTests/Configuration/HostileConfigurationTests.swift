import BridgeCore
import Testing

/// Values that pass validation never trap at run time; payload limits are configurable within bounds.
@Suite struct HostileConfigurationTests {
    private func errors(_ yaml: String) -> [String] {
        do {
            _ = try BridgeConfiguration(yaml: yaml)
            return []
        } catch {
            return error.errors.map(\.description)
        }
    }

    @Test(arguments: ["0.0004", "0.0000001", "1e-300"])
    func durationsThatWouldRoundToZeroAreRefused(value: String) {
        let found = errors(
            """
            mqtt: { url: "mqtt://x" }
            bluetooth:
              reconnect: { initial: \(value), max: 1 }
              request_timeout: \(value)
            """)
        #expect(
            found.contains(
                "bluetooth.reconnect.initial: \(Double(value)!) is not a duration in seconds between 0.001 and 86400"),
            "\(found)")
        #expect(found.contains { $0.hasPrefix("bluetooth.request_timeout:") }, "\(found)")
    }

    @Test func theSmallestDurationIsAMillisecond() throws {
        let configuration = try BridgeConfiguration(
            yaml: """
                mqtt: { url: "mqtt://x" }
                bluetooth: { reconnect: { initial: 0.001, max: 0.001 } }
                """)
        #expect(configuration.bluetooth.reconnectInitial == .milliseconds(1))
    }

    @Test func payloadLimitsDefaultAndOverride() throws {
        let defaults = try BridgeConfiguration(yaml: #"mqtt: { url: "mqtt://x" }"#)
        #expect(defaults.mqtt.payloadLimits == MQTTSettings.PayloadLimits(command: 2048, request: 4096, source: 2048))
        let custom = try BridgeConfiguration(
            yaml: """
                mqtt: { url: "mqtt://x", payload_limits: { command: 600, source: 70000 } }
                """)
        #expect(custom.mqtt.payloadLimits == MQTTSettings.PayloadLimits(command: 600, request: 4096, source: 70000))
        let found = errors(
            """
            mqtt: { url: "mqtt://x", payload_limits: { command: 10, request: 2000000, bogus: 1 } }
            """)
        #expect(found.contains("mqtt.payload_limits.command: 10 is outside 64…1048576"), "\(found)")
        #expect(found.contains("mqtt.payload_limits.request: 2000000 is outside 64…1048576"), "\(found)")
        #expect(found.contains { $0.hasPrefix("mqtt.payload_limits.bogus") }, "\(found)")
    }
}
