import BluetoothCore

/// Validated `mqtt:` section.
package struct MQTTSettings: Sendable, Hashable {
    /// Where the broker is.
    package struct Broker: Sendable, Hashable {
        package var host: String
        package var port: Int
        /// True for `mqtts://`.
        package var usesTLS: Bool

        package init(host: String, port: Int, usesTLS: Bool) {
            self.host = host
            self.port = port
            self.usesTLS = usesTLS
        }
    }

    /// Where the password comes from; the password itself is never held in the configuration.
    package enum PasswordSource: Sendable, Hashable {
        case file(String)
        case environment(String)
    }

    /// `mqtt.tls`.
    package struct TLS: Sendable, Hashable {
        package var caFile: String?
        package var certificateFile: String?
        package var keyFile: String?
        package var insecure: Bool
    }

    /// MQTT protocol version.
    package enum ProtocolVersion: String, Sendable, Hashable {
        case v5 = "5"
        case v311 = "3.1.1"
    }

    package var broker: Broker
    package var baseTopic: String
    /// Nil means `gattway-<hostname>`, computed by the daemon.
    package var clientID: String?
    package var username: String?
    package var password: PasswordSource?
    package var tls: TLS?
    package var keepaliveSeconds: Int
    package var protocolVersion: ProtocolVersion
    package var qos: Int
    package var retain: Bool
    package var gatewayID: String?
    /// Seconds between two `<base>/bridge/metrics` snapshots; 0 publishes none.
    package var metricsIntervalSeconds: Int = ConfigurationDefaults.metricsIntervalSeconds
}
