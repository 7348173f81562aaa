/// The broker's answer to CONNECT: an MQTT 5 CONNACK reason code or an MQTT 3.1.1 return code, with its meaning.
package struct MQTTConnectReason: Sendable, Hashable, CustomStringConvertible {
    package let code: Int
    package let protocolVersion: MQTTProtocolVersion

    package init(code: Int, protocolVersion: MQTTProtocolVersion) {
        self.code = code
        self.protocolVersion = protocolVersion
    }

    /// True for "Success" (v5) or "Connection Accepted" (v3.1.1).
    package var isSuccess: Bool { code == 0 }

    /// The text the MQTT specification gives the code, e.g. "Not authorized" for 135.
    package var meaning: String {
        switch protocolVersion {
        case .v5: Self.v5Meanings[code] ?? "Unknown reason code"
        case .v311: Self.v311Meanings[code] ?? "Unknown return code"
        }
    }

    /// Whether retrying the same CONNECT later can succeed (a busy or unavailable server), as opposed to a
    /// configuration problem (credentials, client id, protocol) that the operator must fix first.
    package var isRetriable: Bool {
        switch protocolVersion {
        case .v5: [136, 137, 159].contains(code)
        case .v311: code == 3
        }
    }

    package var description: String { "\(code) \(meaning)" }

    /// MQTT 5 §3.2.2.2.
    private static let v5Meanings: [Int: String] = [
        0: "Success", 128: "Unspecified error", 129: "Malformed Packet", 130: "Protocol Error",
        131: "Implementation specific error", 132: "Unsupported Protocol Version", 133: "Client Identifier not valid",
        134: "Bad User Name or Password", 135: "Not authorized", 136: "Server unavailable", 137: "Server busy",
        138: "Banned", 140: "Bad authentication method", 144: "Topic Name invalid", 149: "Packet too large",
        151: "Quota exceeded", 153: "Payload format invalid", 154: "Retain not supported", 155: "QoS not supported",
        156: "Use another server", 157: "Server moved", 159: "Connection rate exceeded",
    ]

    /// MQTT 3.1.1 §3.2.2.3.
    private static let v311Meanings: [Int: String] = [
        0: "Connection Accepted", 1: "Unacceptable protocol version", 2: "Identifier rejected",
        3: "Server unavailable", 4: "Bad user name or password", 5: "Not authorized",
    ]
}
