import Logging
package import MQTTCore

extension MosquittoClient {
    /// TLS settings for an `mqtts://` broker (or any broker when set).
    package struct TLS: Sendable {
        /// PEM file of the CA that signed the broker's certificate; nil uses the system's trusted CAs.
        package var caFile: String?
        /// Client certificate and key (PEM) for brokers that require client authentication.
        package var certFile: String?
        package var keyFile: String?
        /// Skips the host-name check of the broker certificate. Only for tests and trusted networks.
        package var insecure: Bool

        package init(caFile: String? = nil, certFile: String? = nil, keyFile: String? = nil, insecure: Bool = false) {
            self.caFile = caFile
            self.certFile = certFile
            self.keyFile = keyFile
            self.insecure = insecure
        }
    }

    /// Where the inbound buffer pauses and resumes reading the broker socket.
    package struct InboundBuffer: Sendable {
        /// Reads pause once this many received messages wait for the consumer.
        package var highWater: Int
        /// Reads resume once the consumer has drained the buffer to this many.
        package var lowWater: Int
        /// The longest a pause may last before one read pass is forced, so the keepalive never expires
        /// (nil: half the keepalive). See `MosquittoClient` for what happens at the cap.
        package var maximumPause: Duration?
        /// Reads also pause once the buffered payloads add up to this many bytes, and resume below a quarter of
        /// it, so a few large messages are bounded like many small ones.
        package var highWaterBytes: Int

        package init(
            highWater: Int = 1_000, lowWater: Int = 250, maximumPause: Duration? = nil, highWaterBytes: Int = 4 << 20
        ) {
            precondition(
                highWater > 0 && lowWater >= 0 && lowWater < highWater, "inbound buffer needs 0 <= lowWater < highWater"
            )
            precondition(highWaterBytes > 0, "inbound buffer needs a positive byte bound")
            self.highWater = highWater
            self.lowWater = lowWater
            self.maximumPause = maximumPause
            self.highWaterBytes = highWaterBytes
        }
    }

    /// Everything the client needs to reach and talk to a broker.
    package struct Options: Sendable {
        package var broker: MQTTBrokerURL
        package var clientID: String
        package var username: String?
        /// Never logged.
        package var password: String?
        /// TLS settings; an `mqtts://` URL without them uses the system's trusted CAs.
        package var tls: TLS?
        package var keepAlive: Duration
        package var protocolVersion: MQTTProtocolVersion
        package var cleanStart: Bool
        /// The Last Will, published by the broker when the link dies without a DISCONNECT.
        package var will: MQTTMessage?
        /// At most this many QoS 1/2 publishes are un-acknowledged; `publish` waits for a slot beyond it.
        package var maxOutstandingPublishes: Int
        /// Sent in CONNECT (MQTT 5): how many unacknowledged QoS 1/2 messages the broker may send us at once.
        package var receiveMaximum: Int
        package var inboundBuffer: InboundBuffer
        package var reconnectBackoff: JitteredBackoff
        /// How long a TCP connect plus CONNACK may take before the attempt counts as failed.
        package var connectTimeout: Duration
        /// How long `subscribe`/`unsubscribe` wait for the broker's answer.
        package var subscribeTimeout: Duration
        /// Disables Nagle's algorithm, which otherwise delays the first messages after a connect by tens of ms.
        package var tcpNoDelay: Bool
        /// Published, and their acknowledgements awaited up to `shutdownTimeout`, before DISCONNECT on graceful
        /// shutdown (e.g. a retained `bridge/state = offline`).
        package var shutdownMessages: [MQTTMessage]
        package var shutdownTimeout: Duration
        /// Received payloads larger than this are not copied out of libmosquitto: the message is delivered with
        /// only the payload's first bytes and `MQTTMessage.oversizePayloadLength` set, for the consumer to refuse.
        /// Nil accepts any size.
        package var maximumInboundPayload: Int?
        /// Sent in CONNECT (MQTT 5): the broker sends no packet larger than this. Nil leaves it unlimited.
        package var maximumPacketSize: Int?

        package init(
            broker: MQTTBrokerURL, clientID: String, username: String? = nil, password: String? = nil,
            tls: TLS? = nil, keepAlive: Duration = .seconds(30), protocolVersion: MQTTProtocolVersion = .v5,
            cleanStart: Bool = true, will: MQTTMessage? = nil, maxOutstandingPublishes: Int = 1_000,
            receiveMaximum: Int = 100, inboundBuffer: InboundBuffer = InboundBuffer(),
            reconnectBackoff: JitteredBackoff = JitteredBackoff(), connectTimeout: Duration = .seconds(10),
            subscribeTimeout: Duration = .seconds(10), tcpNoDelay: Bool = true, shutdownMessages: [MQTTMessage] = [],
            shutdownTimeout: Duration = .seconds(5)
        ) {
            self.broker = broker
            self.clientID = clientID
            self.username = username
            self.password = password
            self.tls = tls
            self.keepAlive = keepAlive
            self.protocolVersion = protocolVersion
            self.cleanStart = cleanStart
            self.will = will
            self.maxOutstandingPublishes = maxOutstandingPublishes
            self.receiveMaximum = receiveMaximum
            self.inboundBuffer = inboundBuffer
            self.reconnectBackoff = reconnectBackoff
            self.connectTimeout = connectTimeout
            self.subscribeTimeout = subscribeTimeout
            self.tcpNoDelay = tcpNoDelay
            self.shutdownMessages = shutdownMessages
            self.shutdownTimeout = shutdownTimeout
        }

        /// The longest a read pause may last: the configured cap, else half the keepalive (libmosquitto closes the
        /// link about one keepalive after a PINGREQ whose PINGRESP it has not read).
        var maximumPause: Duration { inboundBuffer.maximumPause ?? keepAlive / 2 }
    }
}
