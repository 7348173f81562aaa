import CMosquitto
import Logging
import MQTTCore
import Polling

extension MosquittoClient {
    /// The client passed as libmosquitto's `obj` (unretained: `run()` destroys the handle before it returns).
    private static func client(_ context: UnsafeMutableRawPointer?) -> MosquittoClient? {
        guard let context else { return nil }
        return Unmanaged<MosquittoClient>.fromOpaque(context).takeUnretainedValue()
    }

    /// Registers the C callbacks. They run inside our `mosquitto_loop_*` calls, i.e. on the client's loop, so they
    /// copy what they need out of C memory and re-enter the actor with `loopIsolated` (which traps off the loop thread).
    func installCallbacks(_ handle: OpaquePointer) {
        mosquitto_connect_v5_callback_set(handle) { _, context, rc, _, properties in
            let limits = BrokerLimits(connack: properties)
            MosquittoClient.client(context)?.loopIsolated { $0.connackReceived(rc, limits) }
        }
        mosquitto_disconnect_v5_callback_set(handle) { _, context, rc, _ in
            MosquittoClient.client(context)?.loopIsolated { $0.disconnectReceived(rc) }
        }
        mosquitto_publish_v5_callback_set(handle) { _, context, mid, reasonCode, _ in
            // libmosquitto reports every QoS 0 publish here as well, once per notification on the hot path: the
            // client is borrowed for the call (it outlives the handle) rather than retained and released.
            guard let context else { return }
            Unmanaged<MosquittoClient>.fromOpaque(context)._withUnsafeGuaranteedRef {
                $0.loopIsolated(with: (mid, reasonCode)) { $0.publishAcknowledged($1.0, reasonCode: $1.1) }
            }
        }
        mosquitto_message_v5_callback_set(handle) { _, context, message, properties in
            guard let message, let client = MosquittoClient.client(context) else { return }
            // libmosquitto frees `message` when we return. Reading the limit from the immutable options is safe here.
            let copy = MosquittoClient.copyMessage(
                message.pointee, properties, maximumPayload: client.options.maximumInboundPayload)
            client.loopIsolated(with: copy) { $0.messageReceived($1) }
        }
        mosquitto_subscribe_v5_callback_set(handle) { _, context, mid, count, granted, _ in
            let codes = granted.map { Array(UnsafeBufferPointer(start: $0, count: Int(max(count, 0)))) } ?? []
            MosquittoClient.client(context)?.loopIsolated { $0.subscribeAcknowledged(mid, codes: codes) }
        }
        mosquitto_unsubscribe_v5_callback_set(handle) { _, context, mid, _ in
            MosquittoClient.client(context)?.loopIsolated { $0.resumeWaits(.unsuback(mid)) }
        }
    }

    /// How many bytes of an oversize payload are kept, enough for a quoted excerpt in an error result.
    static let oversizeExcerptBytes = 64

    private static func copyMessage(
        _ message: mosquitto_message, _ properties: OpaquePointer?, maximumPayload: Int?
    ) -> MQTTMessage {
        let topic = message.topic.map { String(cString: $0) } ?? ""
        let length = Int(max(message.payloadlen, 0))
        let oversize = maximumPayload.map { length > $0 } ?? false
        // An oversize payload is not copied: a 30 MB message costs libmosquitto's own buffer, never a second one.
        let kept = oversize ? min(length, oversizeExcerptBytes) : length
        let payload = message.payload.map { Array(UnsafeRawBufferPointer(start: $0, count: kept)) } ?? []
        var copy = MQTTMessage(
            topic: topic, payload: payload, qos: MQTTQoS(rawValue: UInt8(clamping: message.qos)) ?? .atMostOnce,
            retain: message.retain, properties: MosquittoPropertyList.read(properties))
        if oversize { copy.oversizePayloadLength = length }
        return copy
    }

    func connackReceived(_ rc: Int32, _ limits: BrokerLimits) {
        connectTimer?.cancel()
        connectTimer = nil
        guard state == .connecting else { return }
        guard rc == 0 else {
            connectionLost(
                .connectionRefused(MQTTConnectReason(code: Int(rc), protocolVersion: options.protocolVersion)))
            return
        }
        state = .connected
        enableDirectPublishes(limits)
        hasConnectedBefore = true
        backoff.reset()
        lastConnectionError = nil
        statistics.connects += 1
        logger.info("mqtt.connected", metadata: ["mqtt.subscriptions": "\(subscriptions.count)"])
        resubscribeAll()
        eventContinuation.yield(.connected)
        resumeWaits(.connected)
        updateWriteInterest()
    }

    func disconnectReceived(_ rc: Int32) {
        guard state == .connecting || state == .connected else { return }
        // v5 DISCONNECT reason codes start at 128; below that, rc is a MOSQ_ERR_* code.
        let reason = rc >= 128 ? "\(rc) \(String(cString: mosquitto_reason_string(rc)))" : MosquittoResult.text(rc)
        connectionLost(.connectionLost(reason: reason))
    }

    func publishAcknowledged(_ mid: Int32, reasonCode: Int32) {
        // QoS 0 publishes also report here; they are not tracked, and with nothing outstanding no lookup is needed.
        guard !outstanding.isEmpty, outstanding.remove(mid) != nil else { return }
        if reasonCode >= 128 {
            statistics.publishesRefused += 1
            logger.warning(
                "mqtt.publish.refused",
                metadata: [LogKey.reasonCode: "\(reasonCode) \(String(cString: mosquitto_reason_string(reasonCode)))"])
        }
        capacityReturned()
        guard !waits.isEmpty else { return }
        resumeWaits(.publishSlot)
        if outstanding.isEmpty { resumeWaits(.allAcked) }
    }

    func subscribeAcknowledged(_ mid: Int32, codes: [Int32]) {
        if isWaiting(for: .suback(mid)) {
            subscribeResults[mid] = codes
            resumeWaits(.suback(mid))
        } else if let refused = codes.first(where: { $0 >= 128 }) {
            // A re-subscription after reconnect: nobody awaits it, so the operator learns of a refusal here.
            logger.error("mqtt.resubscribe.refused", metadata: [LogKey.reasonCode: "\(refused)"])
        }
    }
}
