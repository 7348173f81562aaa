import CMosquitto
import Logging
package import MQTTCore

extension MosquittoClient {
    /// Subscribes to `filter` and remembers it for every reconnect. When connected, waits for the SUBACK (up to
    /// `subscribeTimeout`) and throws `subscriptionRefused` if the broker refuses; when not connected, the filter is
    /// sent as soon as the connection comes up.
    ///
    /// `subscriptionOptions` apply with MQTT 5 only; MQTT 3.1.1 has no subscription options.
    package func subscribe(
        _ filter: String, qos: MQTTQoS, options subscriptionOptions: MQTTSubscriptionOptions = .plain
    ) async throws {
        _ = try MQTTTopicFilter(filter)
        if let index = subscriptions.firstIndex(where: { $0.filter == filter }) {
            subscriptions[index].qos = qos
            subscriptions[index].options = subscriptionOptions
        } else {
            subscriptions.append((filter, qos, subscriptionOptions))
        }
        guard state == .connected, let handle = handle?.pointer else { return }
        var mid: Int32 = 0
        let bits = optionBits(subscriptionOptions)
        try MosquittoResult.check(
            mosquitto_subscribe_v5(handle, &mid, filter, Int32(qos.rawValue), bits, nil),
            operation: "subscribing to \(filter)")
        updateWriteInterest()
        try await wait(for: .suback(mid), operation: "subscribing to \(filter)", timeout: options.subscribeTimeout)
        if let refused = subscribeResults.removeValue(forKey: mid)?.first(where: { $0 >= 128 }) {
            subscriptions.removeAll { $0.filter == filter }
            throw MQTTError.subscriptionRefused(filter: filter, reasonCode: Int(refused))
        }
    }

    /// Unsubscribes from `filter` and forgets it; when connected, waits for the UNSUBACK.
    package func unsubscribe(_ filter: String) async throws {
        subscriptions.removeAll { $0.filter == filter }
        guard state == .connected, let handle = handle?.pointer else { return }
        var mid: Int32 = 0
        try MosquittoResult.check(
            mosquitto_unsubscribe_v5(handle, &mid, filter, nil), operation: "unsubscribing from \(filter)")
        updateWriteInterest()
        try await wait(
            for: .unsuback(mid), operation: "unsubscribing from \(filter)", timeout: options.subscribeTimeout)
    }

    /// libmosquitto refuses MQTT 5 option bits on a 3.1.1 connection, so they are sent with MQTT 5 only.
    private func optionBits(_ subscriptionOptions: MQTTSubscriptionOptions) -> Int32 {
        options.protocolVersion == .v5 ? subscriptionOptions.bits : 0
    }

    /// Re-sends every remembered subscription after a (re)connect, since a clean start forgets them.
    func resubscribeAll() {
        guard let handle = handle?.pointer else { return }
        for subscription in subscriptions {
            var mid: Int32 = 0
            let rc = mosquitto_subscribe_v5(
                handle, &mid, subscription.filter, Int32(subscription.qos.rawValue),
                optionBits(subscription.options), nil)
            if rc != MosquittoResult.success {
                logger.error(
                    "mqtt.resubscribe.failed",
                    metadata: [LogKey.filter: "\(subscription.filter)", LogKey.error: "\(MosquittoResult.text(rc))"])
            }
        }
    }

    /// Waits until the client is connected. On timeout it throws the last connection error when there was one
    /// (e.g. `unreachable` or `connectionRefused`), else `MQTTError.timeout`.
    package func waitUntilConnected(timeout: Duration) async throws {
        if state == .connected { return }
        if state == .stopped || state == .stopping {
            throw lastConnectionError ?? MQTTError.clientStopped(operation: "waiting for the connection")
        }
        do {
            try await wait(for: .connected, operation: "connecting to \(options.broker)", timeout: timeout)
        } catch MQTTError.timeout(let operation, let after) {
            throw lastConnectionError ?? MQTTError.timeout(operation: operation, after: after)
        }
    }
}
