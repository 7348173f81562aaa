import BridgeCore
import MQTTCore
import Mosquitto

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Turns the validated `mqtt` section into the client's options, reading the password from its file or variable.
enum MQTTOptionsFactory {
    struct SecretError: Error, CustomStringConvertible {
        let description: String
    }

    static func options(for configuration: BridgeConfiguration) throws -> MosquittoClient.Options {
        let mqtt = configuration.mqtt
        let topics = TopicLayout(mqtt)
        let offline = MQTTMessage(topic: topics.bridgeState, text: "offline", qos: .atLeastOnce, retain: true)
        var tls: MosquittoClient.TLS?
        if let settings = mqtt.tls {
            tls = MosquittoClient.TLS(
                caFile: settings.caFile, certFile: settings.certificateFile, keyFile: settings.keyFile,
                insecure: settings.insecure)
        } else if mqtt.broker.usesTLS {
            tls = MosquittoClient.TLS()
        }
        var options = MosquittoClient.Options(
            broker: MQTTBrokerURL(host: mqtt.broker.host, port: mqtt.broker.port, usesTLS: mqtt.broker.usesTLS),
            clientID: mqtt.clientID ?? "gattway-\(ProcessInfo.processInfo.hostName)",
            username: mqtt.username, password: try password(mqtt.password), tls: tls,
            keepAlive: .seconds(mqtt.keepaliveSeconds),
            protocolVersion: mqtt.protocolVersion == .v311 ? .v311 : .v5,
            will: offline, shutdownMessages: [offline])
        // Larger payloads are refused by the bridges anyway: never copy them, and with MQTT 5 never receive them.
        options.maximumInboundPayload = mqtt.payloadLimits.largest
        options.maximumPacketSize = mqtt.payloadLimits.largest + packetOverhead
        return options
    }

    /// Room in a packet beside the payload: fixed header, topic name and the publisher's properties (Response
    /// Topic, Correlation Data, user properties). A message whose extras exceed it is dropped by the broker.
    static let packetOverhead = 8 * 1024

    /// The secret itself is never logged; errors name only where it should have come from.
    private static func password(_ source: MQTTSettings.PasswordSource?) throws -> String? {
        switch source {
        case nil: return nil
        case .file(let path):
            guard let text = try? String(contentsOfFile: path, encoding: .utf8) else {
                throw SecretError(description: "cannot read the MQTT password file \(path)")
            }
            return text.trimming(\.isNewline)
        case .environment(let name):
            guard let value = ProcessInfo.processInfo.environment[name] else {
                throw SecretError(description: "the MQTT password variable \(name) is not set")
            }
            return value
        }
    }
}
