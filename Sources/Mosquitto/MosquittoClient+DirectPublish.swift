import CMosquitto
import Logging
import MQTTCore
import Polling

extension MosquittoClient {
    /// Whether this client writes plain QoS 0 packets itself (`DirectPublishes`): on a plain TCP link, where the
    /// socket carries MQTT's bytes as they are. With TLS libmosquitto writes everything, as before.
    nonisolated var writesPlainPublishes: Bool { options.tls == nil && !options.broker.usesTLS }

    /// Takes a QoS 0 message into `direct` when it qualifies; false when libmosquitto is to publish it.
    func publishDirectly(_ message: MQTTMessage, _ handle: OpaquePointer) -> Bool {
        guard direct.isEnabled, message.properties.isEmpty, !mosquitto_want_write(handle),
            direct.add(message, version: options.protocolVersion)
        else { return false }
        statistics.messagesPublished += 1
        statistics.directPublishes += 1
        if direct.unwritten >= DirectPublishes.highWater {
            _ = flushDirect()  // only these: a publish may come from inside a libmosquitto callback
        } else {
            scheduleWriteOut()
        }
        return true
    }

    /// Writes at the end of this loop turn, once, whatever waits then: the turn's publishes leave in one write.
    func scheduleWriteOut() {
        guard !direct.flushScheduled else { return }
        direct.flushScheduled = true
        loop.atTurnEnd { [self] in self.loopIsolated { $0.writeOut() } }
    }

    /// Writes what waits: this client's own packets first, then, once they are all out, what libmosquitto holds
    /// (queued after them). Runs at the end of a turn or on a writable socket, never inside a libmosquitto callback
    /// (libmosquitto's callback lock is held there, and its write would take it again).
    func writeOut() {
        direct.flushScheduled = false
        guard let handle = handle?.pointer, let watch = socketWatch, flushDirect() else { return }
        if mosquitto_want_write(handle) {
            let rc = mosquitto_loop_write(handle, 1)
            guard rc == MosquittoResult.success else {
                if socketWatch === watch { disconnectReceived(rc) }
                return
            }
        }
        // What libmosquitto could not write waits for the socket.
        writeBlocked = mosquitto_want_write(handle)
        queuedInLibmosquitto = 0
        updateWriteInterest()
    }

    /// Writes this client's own packets; true when none is left. A full socket leaves the rest for its next
    /// writable event; a failed write ends the link.
    func flushDirect() -> Bool {
        guard !direct.isEmpty else { return true }
        guard let watch = socketWatch else { return false }
        statistics.directWrites += 1
        switch direct.flush(to: watch.fd) {
        case .drained:
            return true
        case .blocked:
            writeBlocked = true
            updateWriteInterest()
            return false
        case .failed(let reason):
            // The packets are counted lost; libmosquitto's next read would see the link gone as well.
            statistics.messagesLostWithLink += direct.discard()
            logger.warning("mqtt.write_failed", metadata: [LogKey.error: "\(reason)"])
            disconnectReceived(MOSQ_ERR_CONN_LOST.rawValue)
            return false
        }
    }

    /// The broker's limits on what it takes, from CONNACK's properties (MQTT 5; none with MQTT 3.1.1), read inside
    /// libmosquitto's callback. libmosquitto keeps the same limits for what it publishes.
    struct BrokerLimits: Sendable {
        var maximumPacketSize = Int.max
        var retainAvailable = true

        init(connack properties: OpaquePointer?) {
            guard let properties else { return }
            var maximum: UInt32 = 0
            if mosquitto_property_read_int32(
                properties, Int32(MQTT_PROP_MAXIMUM_PACKET_SIZE.rawValue), &maximum, false) != nil, maximum > 0
            {
                maximumPacketSize = Int(maximum)
            }
            var retain: UInt8 = 1
            if mosquitto_property_read_byte(properties, Int32(MQTT_PROP_RETAIN_AVAILABLE.rawValue), &retain, false)
                != nil
            {
                retainAvailable = retain != 0
            }
        }
    }

    /// Turns on writing plain publishes for a link the broker has just accepted.
    func enableDirectPublishes(_ limits: BrokerLimits) {
        guard writesPlainPublishes else { return }
        statistics.messagesLostWithLink += direct.discard()
        direct = DirectPublishes()
        direct.maximumPacketSize = limits.maximumPacketSize
        direct.retainAvailable = limits.retainAvailable
        direct.isEnabled = true
    }

    /// Room for a QoS 0 publish: nothing waits for a full socket, and fewer than `DirectPublishes.highWater` bytes
    /// wait for the turn's end, this client's own and those of QoS 0 messages libmosquitto queued in the turn (in
    /// threaded mode it only queues, and its queue has no bound of its own). Always true off a link: such publishes
    /// fail fast.
    var hasRoomForQoS0: Bool {
        guard let handle = handle?.pointer, state == .connected else { return true }
        guard writesPlainPublishes else { return !mosquitto_want_write(handle) }
        return !writeBlocked && direct.unwritten + queuedInLibmosquitto < DirectPublishes.highWater
    }

    /// Forgets what this client had not written when its link went; counted.
    func discardDirectPublishes() {
        statistics.messagesLostWithLink += direct.discard()
        direct.isEnabled = false
        writeBlocked = false
        queuedInLibmosquitto = 0
    }
}
