import BridgeCore
import Foundation
import Testing

/// The schema's `default` fields document the defaults; ``ConfigurationDefaults`` applies them. They must agree.
@Suite struct ConfigurationDefaultsTests {
    let schema: [String: Any]

    init() throws {
        let url = ExampleFiles.schemasDirectory.appendingPathComponent("config.schema.json")
        schema = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: url)) as? [String: Any])
    }

    private func schemaDefault(_ path: String) -> Any? {
        var node: Any? = schema
        for key in path.split(separator: "/") { node = (node as? [String: Any])?[String(key)] }
        return (node as? [String: Any])?["default"]
    }

    private func expectDefault(_ path: String, _ value: String, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(schemaDefault(path).map { "\($0)" } == value, "\(path)", sourceLocation: sourceLocation)
    }

    @Test func schemaDefaultsMatchTheValidatedDefaults() throws {
        typealias D = ConfigurationDefaults
        let mqtt = "properties/mqtt/properties/"
        expectDefault(mqtt + "base_topic", D.baseTopic)
        expectDefault(mqtt + "keepalive", "\(D.keepaliveSeconds)")
        expectDefault(mqtt + "protocol", D.mqttProtocol)
        expectDefault(mqtt + "qos", "\(D.qos)")
        expectDefault(mqtt + "retain", D.retain ? "1" : "0")
        expectDefault(mqtt + "tls/properties/insecure", D.tlsInsecure ? "1" : "0")
        let bt = "properties/bluetooth/properties/"
        expectDefault(bt + "adapter", D.adapter)
        expectDefault(bt + "scan/properties/duplicates", D.scanDuplicates ? "1" : "0")
        expectDefault(bt + "scan/properties/transport", D.scanTransport)
        expectDefault(bt + "max_concurrent_connects", "\(D.maxConcurrentConnects)")
        expectDefault(bt + "connect_timeout", "\(Int(D.connectTimeoutSeconds))")
        expectDefault(bt + "request_timeout", "\(Int(D.requestTimeoutSeconds))")
        expectDefault(bt + "max_tracked_devices", "\(D.maxTrackedDevices)")
        expectDefault(bt + "advert_min_interval", "\(Int(D.advertMinIntervalSeconds))")
        expectDefault(bt + "reconnect/properties/initial", "\(Int(D.reconnectInitialSeconds))")
        expectDefault(bt + "reconnect/properties/max", "\(Int(D.reconnectMaxSeconds))")
        let device = "$defs/device/properties/"
        expectDefault(device + "connect", D.connect)
        expectDefault(device + "idle_timeout", "\(Int(D.idleTimeoutSeconds))")
        expectDefault("$defs/characteristic/properties/notify", D.characteristicNotify ? "1" : "0")
        expectDefault("$defs/characteristic/properties/read", D.characteristicRead ? "1" : "0")
        expectDefault("$defs/codec", D.codec)
        let peripheral = "properties/peripheral/properties/"
        expectDefault(peripheral + "max_connections", "\(D.peripheralMaxConnections)")
        expectDefault(peripheral + "advertise/properties/discoverable", D.discoverable ? "1" : "0")
        let local = "$defs/localCharacteristic/properties/"
        expectDefault(local + "max_length", "\(D.maxLength)")
        expectDefault(local + "queue/properties/depth", "\(D.queueDepth)")
        expectDefault(local + "queue/properties/when_full", D.queueWhenFull)
        expectDefault("properties/state_dir", D.stateDirectory)
        expectDefault("properties/log_level", D.logLevel)
    }

    @Test func aMinimalConfigurationGetsEveryDefault() throws {
        let config = try BridgeConfiguration(yaml: "mqtt: { url: \"mqtt://localhost\" }")
        #expect(config.mqtt.baseTopic == "gattway")
        #expect(config.mqtt.broker.port == 1883)
        #expect(config.mqtt.keepaliveSeconds == 60 && config.mqtt.qos == 1 && config.mqtt.retain)
        #expect(config.mqtt.protocolVersion == .v5)
        #expect(config.bluetooth.adapter == "hci0" && config.bluetooth.scan.transport == .le)
        #expect(config.bluetooth.connectTimeout == .seconds(20) && config.bluetooth.requestTimeout == .seconds(10))
        #expect(config.bluetooth.reconnectInitial == .seconds(1) && config.bluetooth.reconnectMax == .seconds(60))
        #expect(config.stateDirectory == "/var/lib/gattway" && config.logLevel == .info)
        #expect(config.peripheral == nil && config.devices.isEmpty)
    }
}
