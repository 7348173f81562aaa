import BridgeCore
import Testing

@Suite struct MetricsConfigurationTests {
    @Test(arguments: [
        ("127.0.0.1:9464", "127.0.0.1", 9464),
        ("0.0.0.0:80", "0.0.0.0", 80),
        ("[::1]:9464", "::1", 9464),
        ("localhost:1", "localhost", 1),
    ])
    func listenAddressesParse(_ text: String, _ host: String, _ port: Int) throws {
        let address = try #require(ListenAddress(parsing: text))
        #expect(address.host == host && address.port == port)
        #expect(address.description == text)
    }

    @Test(arguments: [
        "example.com:80", "1.2.3.4", "1.2.3.4:0", "1.2.3.4:65536", "256.1.1.1:80", "[::1]9464", "[example]:80", ":80",
        "1.2.3.4:+80", "",
    ])
    func otherListenAddressesAreRefused(_ text: String) {
        #expect(ListenAddress(parsing: text) == nil)
    }

    @Test func thePrometheusEndpointIsOffUnlessConfigured() throws {
        let plain = try BridgeConfiguration(yaml: "mqtt: { url: \"mqtt://localhost\" }")
        #expect(plain.metrics.prometheusListen == nil)
        #expect(plain.mqtt.healthIntervalSeconds == 60)
        let on = try BridgeConfiguration(
            yaml: """
                mqtt: { url: "mqtt://localhost", health_interval: 5 }
                metrics: { prometheus: { listen: "127.0.0.1:9464" } }
                """)
        #expect(on.metrics.prometheusListen == ListenAddress(host: "127.0.0.1", port: 9464))
        #expect(on.mqtt.healthIntervalSeconds == 5)
        #expect(throws: (any Error).self) {
            try BridgeConfiguration(yaml: "mqtt: { url: \"mqtt://localhost\" }\nmetrics: { prometheus: { port: 1 } }")
        }
    }
}
