import BluetoothCore

/// Validated `mqtt:` section.
package struct MQTTSettings: Sendable, Hashable {
    /// Where the broker is: a host and port, or (port 0, as libmosquitto takes it) a unix socket's path.
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

        /// A broker on this machine listening on the unix domain socket at `path` (`unix:///path`).
        package init(socketPath path: String) {
            self.init(host: path, port: 0, usesTLS: false)
        }

        package var usesUnixSocket: Bool { port == 0 }

        /// The room of `sockaddr_un.sun_path` on Linux, less its NUL.
        package static let maxSocketPathBytes = 107
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
    /// Seconds between two `<base>/bridge/<gateway>/health` messages when nothing changed.
    package var healthIntervalSeconds: Int = ConfigurationDefaults.healthIntervalSeconds
    /// The largest payload accepted per kind of inbound message (`mqtt.payload_limits`).
    package var payloadLimits = PayloadLimits()

    /// `mqtt.payload_limits`: bytes accepted per kind of inbound payload; larger ones are refused unparsed.
    package struct PayloadLimits: Sendable, Hashable {
        /// `/set` and `/get` payloads.
        package var command: Int
        /// `bridge/request/<verb>` payloads.
        package var request: Int
        /// Payloads on a peripheral characteristic's `source_topic`.
        package var source: Int

        package init(
            command: Int = ConfigurationDefaults.commandPayloadLimit,
            request: Int = ConfigurationDefaults.requestPayloadLimit,
            source: Int = ConfigurationDefaults.sourcePayloadLimit
        ) {
            self.command = command
            self.request = request
            self.source = source
        }

        /// The largest of the three: what a connection must accept at all.
        package var largest: Int { max(command, request, source) }
    }
}
