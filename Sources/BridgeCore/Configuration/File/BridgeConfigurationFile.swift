/// The configuration file exactly as written: every field optional, snake_case keys, no validation.
///
/// Mirrors `schemas/config.schema.json` one to one. ``BridgeConfiguration`` turns it into validated types.
package struct BridgeConfigurationFile: Codable, Sendable {
    package var mqtt: MQTTSection?
    package var bluetooth: BluetoothSection?
    package var devices: [DeviceSection]?
    package var peripheral: PeripheralSection?
    package var homeassistant: HomeAssistantSection?
    package var stateDir: String?
    package var logLevel: String?
    package var metrics: MetricsSection?
    package var fleet: FleetSection?

    enum CodingKeys: String, CodingKey, CaseIterable {
        case mqtt, bluetooth, devices, peripheral, homeassistant, metrics, fleet
        case stateDir = "state_dir"
        case logLevel = "log_level"
    }

    package init(from decoder: any Decoder) throws {
        let read = try FileSectionReader(decoder, keys: CodingKeys.self)
        mqtt = read(.mqtt)
        bluetooth = read(.bluetooth)
        devices = read(.devices)
        peripheral = read(.peripheral)
        homeassistant = read(.homeassistant)
        stateDir = read(.stateDir)
        logLevel = read(.logLevel)
        metrics = read(.metrics)
        fleet = read(.fleet)
    }

    /// `metrics:`.
    package struct MetricsSection: Codable, Sendable {
        package var prometheus: PrometheusSection?

        enum CodingKeys: String, CodingKey, CaseIterable {
            case prometheus
        }

        package init(from decoder: any Decoder) throws {
            let read = try FileSectionReader(decoder, keys: CodingKeys.self)
            prometheus = read(.prometheus)
        }
    }

    /// `metrics.prometheus:`.
    package struct PrometheusSection: Codable, Sendable {
        package var listen: String?

        enum CodingKeys: String, CodingKey, CaseIterable {
            case listen
        }

        package init(from decoder: any Decoder) throws {
            let read = try FileSectionReader(decoder, keys: CodingKeys.self)
            listen = read(.listen)
        }
    }

    /// `mqtt:`.
    package struct MQTTSection: Codable, Sendable {
        package var url, baseTopic, clientID, username, passwordFile, passwordEnv: String?
        package var tls: TLSSection?
        package var keepalive: Int?
        package var `protocol`: String?
        package var qos: Int?
        package var retain: Bool?
        package var gatewayID: String?
        package var metricsInterval: Int?
        package var healthInterval: Int?
        package var payloadLimits: PayloadLimitsSection?

        enum CodingKeys: String, CodingKey, CaseIterable {
            case url, username, tls, keepalive, `protocol`, qos, retain
            case payloadLimits = "payload_limits"
            case metricsInterval = "metrics_interval"
            case healthInterval = "health_interval"
            case baseTopic = "base_topic"
            case clientID = "client_id"
            case passwordFile = "password_file"
            case passwordEnv = "password_env"
            case gatewayID = "gateway_id"
        }

        package init(from decoder: any Decoder) throws {
            let read = try FileSectionReader(decoder, keys: CodingKeys.self)
            url = read(.url)
            baseTopic = read(.baseTopic)
            clientID = read(.clientID)
            username = read(.username)
            passwordFile = read(.passwordFile)
            passwordEnv = read(.passwordEnv)
            tls = read(.tls)
            keepalive = read(.keepalive)
            `protocol` = read(.protocol)
            qos = read(.qos)
            retain = read(.retain)
            gatewayID = read(.gatewayID)
            metricsInterval = read(.metricsInterval)
            healthInterval = read(.healthInterval)
            payloadLimits = read(.payloadLimits)
        }
    }

    /// `mqtt.payload_limits:`.
    package struct PayloadLimitsSection: Codable, Sendable {
        package var command, request, source: Int?

        enum CodingKeys: String, CodingKey, CaseIterable {
            case command, request, source
        }

        package init(from decoder: any Decoder) throws {
            let read = try FileSectionReader(decoder, keys: CodingKeys.self)
            command = read(.command)
            request = read(.request)
            source = read(.source)
        }
    }

    /// `mqtt.tls:`.
    package struct TLSSection: Codable, Sendable {
        package var caFile, certFile, keyFile: String?
        package var insecure: Bool?

        enum CodingKeys: String, CodingKey, CaseIterable {
            case insecure
            case caFile = "ca_file"
            case certFile = "cert_file"
            case keyFile = "key_file"
        }

        package init(from decoder: any Decoder) throws {
            let read = try FileSectionReader(decoder, keys: CodingKeys.self)
            caFile = read(.caFile)
            certFile = read(.certFile)
            keyFile = read(.keyFile)
            insecure = read(.insecure)
        }
    }
}
