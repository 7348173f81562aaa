import MQTTCore
import Testing

@Suite struct MQTTBrokerURLTests {
    @Test func parsesHostsPortsAndSchemes() throws {
        #expect(
            try MQTTBrokerURL(parsing: "mqtt://localhost")
                == MQTTBrokerURL(host: "localhost", port: 1883, usesTLS: false))
        #expect(
            try MQTTBrokerURL(parsing: "mqtts://broker.example")
                == MQTTBrokerURL(host: "broker.example", port: 8883, usesTLS: true))
        #expect(try MQTTBrokerURL(parsing: "mqtt://10.0.0.2:1884/") == MQTTBrokerURL(host: "10.0.0.2", port: 1884))
        #expect(try MQTTBrokerURL(parsing: "mqtt://[::1]:1999") == MQTTBrokerURL(host: "::1", port: 1999))
        #expect(try MQTTBrokerURL(parsing: "mqtts://[fe80::1]").port == 8883)
        #expect(try MQTTBrokerURL(parsing: "mqtt://[::1]:1999").description == "mqtt://[::1]:1999")
        let socket = try MQTTBrokerURL(parsing: "unix:///run/mosquitto/mosquitto.sock")
        #expect(socket == .unixSocket("/run/mosquitto/mosquitto.sock") && socket.port == 0 && socket.usesUnixSocket)
        #expect(socket.description == "unix:///run/mosquitto/mosquitto.sock")
        #expect(try !MQTTBrokerURL(parsing: "mqtt://localhost").usesUnixSocket)
    }

    @Test(arguments: [
        ("http://localhost", "scheme"), ("mqtt://", "host is missing"), ("mqtt://host:0", "port"),
        ("mqtt://host:70000", "port"), ("mqtt://host:abc", "port"), ("mqtt://host/path", "no path"),
        ("mqtt://user:secret@host", "credentials"), ("mqtt://[::1", "closing"), ("localhost:1883", "scheme"),
        ("unix://relative.sock", "absolute path"), ("unix:///", "absolute path"),
    ])
    func refusesBadURLsWithAReason(_ text: String, _ reasonFragment: String) {
        do {
            _ = try MQTTBrokerURL(parsing: text)
            Issue.record("\(text) was accepted")
        } catch {
            guard case .invalidBrokerURL(let url, let reason) = error else {
                Issue.record("wrong error \(error)")
                return
            }
            #expect(url == text)
            #expect(reason.contains(reasonFragment), "\(reason)")
        }
    }
}
