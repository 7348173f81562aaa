import CMosquitto
import Glibc
package import MQTTCore

extension MosquittoClient {
    /// Publishes `message`. Waits for a slot while `maxOutstandingPublishes` QoS 1/2 messages are un-acknowledged,
    /// and for QoS 0 while the socket's output buffer is full; it does not wait for the acknowledgement itself.
    ///
    /// While disconnected, QoS 1/2 messages stay queued in libmosquitto and are sent after the reconnect (they count
    /// as outstanding); QoS 0 fails with `MQTTError.notConnected` (the caller counts the drop).
    package func publish(_ message: MQTTMessage) async throws {
        try await waitForCapacity(message.qos)
        try publishNow(message)
    }

    /// Publishes `messages` in order in one hop to the client (the hot path), waiting for capacity as `publish` does.
    /// On error, the messages before the failing one have been published.
    package func publish(contentsOf messages: [MQTTMessage]) async throws {
        for message in messages {
            try await waitForCapacity(message.qos)
            try publishNow(message)
        }
    }

    /// Waits until every QoS 1/2 publish made so far is acknowledged, or throws `MQTTError.timeout`.
    package func waitForAcks(timeout: Duration) async throws {
        let deadline = ContinuousClock.now + timeout
        while !outstanding.isEmpty {
            let remaining = deadline - .now
            guard remaining > .zero else {
                throw MQTTError.timeout(operation: "waiting for \(outstanding.count) acknowledgements", after: timeout)
            }
            do {
                try await wait(
                    for: .allAcked, operation: "waiting for \(outstanding.count) acknowledgements", timeout: remaining)
            } catch MQTTError.timeout {
                throw MQTTError.timeout(operation: "waiting for \(outstanding.count) acknowledgements", after: timeout)
            }
        }
    }

    private func waitForCapacity(_ qos: MQTTQoS) async throws {
        if qos > .atMostOnce {
            while outstanding.count >= options.maxOutstandingPublishes {
                guard state != .stopped else { throw MQTTError.clientStopped(operation: "publishing") }
                try await wait(for: .publishSlot, operation: "waiting for a publish slot", timeout: nil)
            }
        } else {
            while !hasRoomForQoS0 {
                try await wait(for: .writeDrained, operation: "waiting for the socket to drain", timeout: nil)
            }
        }
    }

    /// Hands one message to libmosquitto without waiting.
    func publishNow(_ message: MQTTMessage) throws(MQTTError) {
        if let setupError { throw setupError }
        guard let handle = handle?.pointer, state != .stopped else {
            throw .clientStopped(operation: "publishing to \(message.topic)")
        }
        if message.qos == .atMostOnce && state != .connected {
            try MQTTTopic.validate(message.topic)  // a bad topic is the clearer error of the two
            throw .notConnected(operation: "publishing to \(message.topic)")
        }
        if message.qos == .atMostOnce, publishDirectly(message, handle) { return }
        var properties = options.protocolVersion == .v5 ? try MosquittoPropertyList.make(message.properties) : nil
        defer { mosquitto_property_free_all(&properties) }  // libmosquitto copies the list
        coalesceWrites()
        var mid: Int32 = 0
        // withCString reads a native string in place; passing the String itself converted it through a copy.
        // libmosquitto refuses an empty topic, wildcards, bad UTF-8 and more than 65,535 bytes (MQTTTopic's rules),
        // so the topic is scanned once, there; only a NUL, which would cut the topic short in C, is checked here.
        let rc = message.topic.withCString { topic in
            guard strlen(topic) == message.topic.utf8.count else { return MOSQ_ERR_INVAL.rawValue }
            return message.payload.withUnsafeBytes {
                mosquitto_publish_v5(
                    handle, &mid, topic, Int32(clamping: $0.count), $0.baseAddress, Int32(message.qos.rawValue),
                    message.retain, properties)
            }
        }
        // For QoS 1/2, MOSQ_ERR_NO_CONN means "queued for after the reconnect", not lost.
        let queuedOffline = rc == MOSQ_ERR_NO_CONN.rawValue && message.qos > .atMostOnce
        guard rc == MosquittoResult.success || queuedOffline else {
            if rc == MOSQ_ERR_INVAL.rawValue || rc == MOSQ_ERR_MALFORMED_UTF8.rawValue {
                try MQTTTopic.validate(message.topic)  // says which rule the topic breaks
            }
            throw MosquittoResult.error(rc, operation: "publishing to \(message.topic)")
        }
        if message.qos > .atMostOnce {
            outstanding.insert(mid)
        } else if writesPlainPublishes {
            queuedInLibmosquitto += message.topic.utf8.count + message.payload.count
        }
        statistics.messagesPublished += 1
        updateWriteInterest()
    }
}
