import BluetoothCore
import BridgeCore
import Foundation
import Testing

/// The schema's `default` fields document the defaults; the validated model applies them. They must agree, for
/// every `default` the schema has.
@Suite struct ConfigurationDefaultsTests {
    /// A configuration that leaves out every optional field, with one of each element that has defaults of its
    /// own (a device of each connect policy, a characteristic, a local service, characteristic and descriptor).
    static let sparse = """
        mqtt: { url: "mqtts://broker.example", tls: { ca_file: /etc/ssl/ca.pem } }
        homeassistant: {}
        devices:
          - address: "AA:BB:CC:DD:EE:01"
            characteristics: [ { service: "180D", uuid: "2A37" } ]
          - address: "AA:BB:CC:DD:EE:02"
            connect: on_demand
        peripheral:
          services:
            - uuid: "6e400001-b5a3-f393-e0a9-e50e24dcca9e"
              characteristics:
                - uuid: "6e400003-b5a3-f393-e0a9-e50e24dcca9e"
                  flags: [read]
                  descriptors: [ { uuid: "2901", value: "41" } ]
        """

    /// Where each schema default lands in the model, rendered as the schema writes it.
    static let modelValues: [String: @Sendable (BridgeConfiguration) -> String?] = [
        "properties/mqtt/properties/base_topic": { $0.mqtt.baseTopic },
        "properties/mqtt/properties/tls/properties/insecure": { $0.mqtt.tls.map { "\($0.insecure)" } },
        "properties/mqtt/properties/keepalive": { "\($0.mqtt.keepaliveSeconds)" },
        "properties/mqtt/properties/protocol": { $0.mqtt.protocolVersion.rawValue },
        "properties/mqtt/properties/qos": { "\($0.mqtt.qos)" },
        "properties/mqtt/properties/retain": { "\($0.mqtt.retain)" },
        "properties/mqtt/properties/metrics_interval": { "\($0.mqtt.metricsIntervalSeconds)" },
        "properties/mqtt/properties/health_interval": { "\($0.mqtt.healthIntervalSeconds)" },
        "properties/mqtt/properties/payload_limits/properties/command": { "\($0.mqtt.payloadLimits.command)" },
        "properties/mqtt/properties/payload_limits/properties/request": { "\($0.mqtt.payloadLimits.request)" },
        "properties/mqtt/properties/payload_limits/properties/source": { "\($0.mqtt.payloadLimits.source)" },
        "properties/bluetooth/properties/adapter": { $0.bluetooth.adapter },
        "properties/bluetooth/properties/scan/properties/duplicates": { "\($0.bluetooth.scan.duplicates)" },
        "properties/bluetooth/properties/scan/properties/transport": { $0.bluetooth.scan.transport.rawValue },
        "properties/bluetooth/properties/max_concurrent_connects": { "\($0.bluetooth.maxConcurrentConnects)" },
        "properties/bluetooth/properties/connect_timeout": { seconds($0.bluetooth.connectTimeout) },
        "properties/bluetooth/properties/request_timeout": { seconds($0.bluetooth.requestTimeout) },
        "properties/bluetooth/properties/max_tracked_devices": { "\($0.bluetooth.maxTrackedDevices)" },
        "properties/bluetooth/properties/advert_min_interval": { seconds($0.bluetooth.advertMinInterval) },
        // The schema's default is a listening gateway's; with a device that may connect, or the peripheral, it is 0.02
        // (`advertBatchDefaultFollowsTheLinks`).
        "properties/bluetooth/properties/advert_batch": { config in
            var listening = config
            listening.devices = listening.devices.filter { $0.connect == .never }
            listening.peripheral = nil
            return milliseconds(listening.advertBatch)
        },
        "properties/bluetooth/properties/unheard_timeout": { seconds($0.bluetooth.unheardTimeout) },
        "properties/bluetooth/properties/reconnect/properties/initial": { seconds($0.bluetooth.reconnectInitial) },
        "properties/bluetooth/properties/reconnect/properties/max": { seconds($0.bluetooth.reconnectMax) },
        "properties/peripheral/properties/max_connections": { $0.peripheral.map { "\($0.maxConnections)" } },
        "properties/peripheral/properties/stall_limit": { $0.peripheral.map { seconds($0.stallLimit) } },
        "properties/peripheral/properties/advertise/properties/discoverable": {
            $0.peripheral.map { "\($0.advertisement.discoverable)" }
        },
        "properties/peripheral/properties/services/items/properties/primary": {
            $0.peripheral?.services.first.map { "\($0.primary)" }
        },
        "properties/homeassistant/properties/discovery_prefix": { $0.homeAssistant?.discoveryPrefix },
        "properties/homeassistant/properties/status_topic": { $0.homeAssistant?.statusTopic },
        "properties/fleet/properties/margin": { "\($0.fleet.margin)" },
        "properties/fleet/properties/hold": { seconds($0.fleet.hold) },
        "properties/fleet/properties/connection_slots": { "\($0.fleet.connectionSlots)" },
        "properties/state_dir": { $0.stateDirectory },
        "properties/log_level": { $0.logLevel.rawValue },
        "$defs/codec": { $0.devices.first?.characteristics.first.map { "\($0.codec)" } },
        "$defs/device/properties/connect": { config in
            guard case .always = config.devices.first?.connect else {
                return "\(String(describing: config.devices.first?.connect))"
            }
            return "always"
        },
        "$defs/device/properties/decoder": { config in
            guard case .auto = config.devices.first?.decoder else { return "not auto" }
            return "auto"
        },
        "$defs/device/properties/pair": { "\($0.devices.first?.pairing != nil)" },
        "$defs/device/properties/idle_timeout": { config in
            guard case .onDemand(let idle) = config.devices.last?.connect else { return nil }
            return seconds(idle)
        },
        "$defs/characteristic/properties/notify": { $0.devices.first?.characteristics.first.map { "\($0.notify)" } },
        "$defs/characteristic/properties/read": { $0.devices.first?.characteristics.first.map { "\($0.read)" } },
        "$defs/localCharacteristic/properties/max_length": { localCharacteristic($0).map { "\($0.maxLength)" } },
        "$defs/localCharacteristic/properties/queue/properties/depth": {
            localCharacteristic($0).map { "\($0.queueDepth)" }
        },
        "$defs/localCharacteristic/properties/queue/properties/when_full": {
            localCharacteristic($0)?.whenFull.rawValue
        },
        "$defs/localCharacteristic/properties/descriptors/items/properties/flags": {
            localCharacteristic($0)?.descriptors.first.map { $0.flags.map(\.rawValue).joined(separator: ",") }
        },
    ]

    static func seconds(_ duration: Duration) -> String { "\(duration.components.seconds)" }

    /// A duration under a second as the schema writes it in seconds (`0.02`).
    static func milliseconds(_ duration: Duration) -> String {
        "\(Double(duration.components.attoseconds / 1_000_000_000_000_000) / 1000)"
    }

    static func localCharacteristic(_ config: BridgeConfiguration) -> PeripheralConfiguration.LocalCharacteristic? {
        config.peripheral?.services.first?.characteristics.first
    }

    /// Every `default` in the schema, by its path (`properties/mqtt/properties/qos`), rendered as text.
    static func schemaDefaults() throws -> [String: String] {
        let url = ExampleFiles.schemasDirectory.appendingPathComponent("config.schema.json")
        let schema = try JSONSerialization.jsonObject(with: Data(contentsOf: url))
        var found: [String: String] = [:]
        func walk(_ node: Any, _ path: [String]) {
            if let object = node as? [String: Any] {
                if let value = object["default"] { found[path.joined(separator: "/")] = render(value) }
                for (key, child) in object where key != "default" { walk(child, path + [key]) }
            } else if let array = node as? [Any] {
                for (index, child) in array.enumerated() { walk(child, path + ["\(index)"]) }
            }
        }
        walk(schema, [])
        return found
    }

    static func render(_ value: Any) -> String {
        // JSON true/false arrive as NSNumbers of the C type "c"; integers as other NSNumbers.
        if let number = value as? NSNumber, String(cString: number.objCType) == "c" { return "\(number.boolValue)" }
        if let array = value as? [Any] { return array.map(render).joined(separator: ",") }
        return "\(value)"
    }

    @Test func everySchemaDefaultIsWhatTheModelApplies() throws {
        let defaults = try Self.schemaDefaults()
        #expect(defaults.count >= 30, "the schema walk found only \(defaults.keys.sorted())")
        #expect(
            Set(defaults.keys) == Set(Self.modelValues.keys),
            """
            schema defaults without a model check: \(Set(defaults.keys).subtracting(Self.modelValues.keys).sorted()); \
            checks for no schema default: \(Set(Self.modelValues.keys).subtracting(defaults.keys).sorted())
            """)
        let config = try BridgeConfiguration(yaml: Self.sparse)
        for (path, expected) in defaults.sorted(by: { $0.key < $1.key }) {
            guard let modelValue = Self.modelValues[path] else { continue }
            #expect(modelValue(config) == expected, "\(path)")
        }
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
        #expect(config.bluetooth.advertBatch == nil && config.advertBatch == .milliseconds(100))
    }

    /// Unless configured, reports are gathered for 100 ms while Gattway only listens, and for 20 ms once a device
    /// entry may connect or the peripheral runs: a value or a call that arrives during a batch waits for its end.
    @Test(arguments: [
        ("", 100), ("devices: [{ match: { service: \"FCD2\" }, connect: never }]", 100),
        ("devices: [{ address: \"C4:7C:8D:6A:3E:11\", connect: never }, { address: \"D0:0D:10:C4:00:01\" }]", 20),
        ("devices: [{ match: { name_prefix: \"lock\" }, connect: on_demand }]", 20),
        ("peripheral: { advertise: { local_name: panel } }", 20),
        ("bluetooth: { advert_batch: 0.05 }\ndevices: [{ address: \"D0:0D:10:C4:00:01\" }]", 50),
    ])
    func advertBatchDefaultFollowsTheLinks(extra: String, milliseconds: Int64) throws {
        let config = try BridgeConfiguration(yaml: "mqtt: { url: \"mqtt://localhost\" }\n" + extra)
        #expect(config.advertBatch == .milliseconds(milliseconds))
    }

    @Test("advert_batch: 0 turns batching off, a duration up to 1 s sets it, anything else is refused")
    func advertBatch() throws {
        func batch(_ value: String) throws -> Duration {
            try BridgeConfiguration(yaml: "mqtt: { url: \"mqtt://localhost\" }\nbluetooth: { advert_batch: \(value) }")
                .advertBatch
        }
        #expect(try batch("0") == .zero)
        #expect(try batch("0.005") == .milliseconds(5))
        #expect(try batch("1") == .seconds(1))
        for refused in ["-0.01", "0.0001", "1.5", ".nan", "\"soon\""] {
            let error = #expect(throws: ConfigurationErrors.self, "advert_batch: \(refused)") { try batch(refused) }
            #expect(error?.description.contains("bluetooth.advert_batch") ?? false, "\(String(describing: error))")
        }
    }
}
