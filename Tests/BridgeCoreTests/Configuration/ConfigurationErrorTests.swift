import BluetoothCore
import BridgeCore
import Foundation
import Testing

@Suite struct ConfigurationErrorTests {
    private func errors(_ yaml: String) -> [String] {
        do {
            _ = try BridgeConfiguration(yaml: yaml)
            return []
        } catch {
            return error.errors.map(\.description)
        }
    }

    @Test func collectsEveryErrorWithItsPath() {
        let found = errors(
            """
            mqtt: { url: "http://x", tls: { cert_file: a } }
            devices:
              - { name: "", address: "zz" }
              - name: ok
                address: "C4:7C:8D:6A:3E:11"
                connect: always
                idle_timeout: 5
                characteristics:
                  - { service: "180D", uuid: "2A37", write: sometimes }
            """)
        #expect(
            found == [
                "mqtt.url: \"http://x\" must start with mqtt://, mqtts:// or unix://",
                "mqtt.tls: cert_file and key_file must be given together",
                "devices[0].name: \"\" must not be empty",
                "devices[0].address: \"zz\" is not a Bluetooth address",
                "devices[1].idle_timeout: only applies to connect: on_demand",
                "devices[1].characteristics[0].write: \"sometimes\" is not one of with_response, without_response",
            ])
    }

    @Test func aBrokerOnAUnixSocketIsNamedByItsAbsolutePath() throws {
        let config = try BridgeConfiguration(yaml: "mqtt: { url: \"unix:///run/mosquitto/mosquitto.sock\" }")
        #expect(config.mqtt.broker == MQTTSettings.Broker(socketPath: "/run/mosquitto/mosquitto.sock"))
        #expect(config.mqtt.broker.usesUnixSocket && config.mqtt.broker.port == 0)
        let tooLong = "/" + String(repeating: "s", count: MQTTSettings.Broker.maxSocketPathBytes)
        #expect(
            errors("mqtt: { url: \"unix://run/mosquitto.sock\" }") == [
                "mqtt.url: \"unix://run/mosquitto.sock\" needs the socket's absolute path: "
                    + "unix:///run/mosquitto/mosquitto.sock"
            ])
        #expect(errors("mqtt: { url: \"unix:///\" }").count == 1)
        #expect(
            errors("mqtt: { url: \"unix://\(tooLong)\" }") == [
                "mqtt.url: \"unix://\(tooLong)\": a unix socket path holds at most 107 bytes"
            ])
        #expect(errors("mqtt: { url: \"unix://\(tooLong.dropLast())\" }").isEmpty)
        #expect(
            errors("mqtt: { url: \"unix:///run/m\\0.sock\" }") == [
                "mqtt.url: a unix socket path must not contain a NUL byte"
            ])
        #expect(
            errors("mqtt: { url: \"unix:///run/m.sock\", tls: { ca_file: ca.pem } }") == [
                "mqtt.tls: is set but mqtt.url is a unix socket, which carries no TLS"
            ])
    }

    @Test func typeMismatchesAreReportedOnceAtTheirPath() {
        let found = errors(
            """
            mqtt: { url: [1], keepalive: soon }
            bluetooth: { scan: { duplicates: maybe } }
            """)
        #expect(
            found == [
                "mqtt.url: expected a string", "mqtt.keepalive: expected an integer",
                "bluetooth.scan.duplicates: expected true or false",
            ])
    }

    @Test func emptyAndNonMappingDocumentsAreClearErrors() {
        #expect(errors("") == ["the configuration is empty (mqtt.url is required)"])
        #expect(errors("- a\n- b").count == 1)
    }

    @Test func secretsAreReferencedNotHeld() throws {
        let config = try BridgeConfiguration(yaml: "mqtt: { url: \"mqtts://h\", password_env: PW }")
        #expect(config.mqtt.password == .environment("PW"))
        #expect(config.mqtt.broker == .init(host: "h", port: 8883, usesTLS: true))
    }

    @Test func demoConfigurationHasTheExpectedShape() throws {
        let config = try BridgeConfiguration.load(path: ExampleFiles.path("valid", "demo.yaml"))
        #expect(config.devices.map(\.topicName) == ["chest-strap", "lock", "thermometer"])
        #expect(config.devices[0].selector == .address(BluetoothAddress("C4:7C:8D:6A:3E:11")!))
        #expect(config.devices[0].characteristics[0].codec == .heartRateMeasurement)
        #expect(config.devices[1].characteristics[0].write == .withResponse)
        #expect(config.devices[2].connect == .never)
    }
}

@Suite struct ConfigurationScalarTests {
    @Test func unquotedNumbersAreAcceptedWhereTextIsExpected() throws {
        let config = try BridgeConfiguration(
            yaml: """
                mqtt: { url: "mqtt://localhost", protocol: 5 }
                devices:
                  - name: 42
                    address: "C4:7C:8D:6A:3E:11"
                    characteristics:
                      - { service: 1800, uuid: 2A00, read: true }
                peripheral:
                  advertise: { manufacturer_data: { company_id: 0x004C, data: 0102 } }
                  services:
                    - uuid: 180F
                      characteristics:
                        - { uuid: 2A19, flags: [read], source_topic: x/y, codec: uint8, initial_value: 100 }
                """)
        #expect(config.mqtt.protocolVersion == .v5)
        #expect(config.devices[0].name == "42")
        #expect(config.devices[0].characteristics[0].topicName == "1800/2a00")
        #expect(config.peripheral?.advertisement.manufacturerData?.data == [0x01, 0x02])
        #expect(config.peripheral?.services[0].characteristics[0].initialValue == [100])
    }

    @Test func unreadableFilesNameThePath() throws {
        // A missing file, and a folder where a file was expected.
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent(
            "gattway-config-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        for path in ["/nonexistent/gattway.yaml", folder.path] {
            let error = #expect(throws: ConfigurationErrors.self) { try BridgeConfiguration.load(path: path) }
            #expect(error?.errors.count == 1, "\(path)")
            #expect(
                error?.errors.first?.message.hasPrefix("cannot read \(path):") == true, "\(String(describing: error))")
        }
    }
}
