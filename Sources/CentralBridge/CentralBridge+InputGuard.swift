import BluetoothCore
import BridgeCore
import Logging
import MQTTCore
import Metrics

extension CentralBridge {
    /// The Response Topic rule over every filter Gattway subscribes to: this bridge's command topics and, when
    /// the local peripheral runs on the other connection, its source topics.
    var responseTopicRule: ResponseTopicRule {
        var filters = subscribedFilters
        filters.insert(routes.bridge.bridgeRequestFilter)
        for service in configuration.peripheral?.services ?? [] {
            for characteristic in service.characteristics {
                if let source = characteristic.sourceTopic { filters.insert(source) }
            }
        }
        return ResponseTopicRule(
            baseTopic: configuration.mqtt.baseTopic, subscriptions: filters.compactMap { try? MQTTTopicFilter($0) })
    }

    /// Checks a command before anything in it is parsed; a refused command is counted, logged (rate-limited) and
    /// answered on `defaultReplyTopic` with an error result, never on the requester's Response Topic.
    ///
    /// - Returns: false when the command must not run.
    func admitCommand(_ message: MQTTMessage, limit: Int, defaultReplyTopic: String?) -> Bool {
        guard
            let refusal = CommandRefusal.check(
                retained: message.retain, payloadSize: message.oversizePayloadLength ?? message.payload.count,
                limit: limit, responseTopic: message.properties.responseTopic, rule: responseTopicRule)
        else { return true }
        Counter(label: "gattway.mqtt.commands_refused", dimensions: [("reason", refusal.metricReason)]).increment()
        let decision = refusals.report(refusal, topic: message.topic, at: started.duration(to: clock.now))
        if case .log(let suppressed) = decision {
            logger.warning(
                "mqtt.command.refused",
                metadata: [
                    "mqtt.topic": "\(PayloadExcerpt.quote(Array(message.topic.utf8), maximumBytes: 128))",
                    "reason": "\(refusal.metricReason)", "error": "\(refusal)",
                    "payload.excerpt": "\(PayloadExcerpt.quote(message.payload))",
                    "suppressed_since_last": "\(suppressed)",
                ])
        }
        if let defaultReplyTopic {
            outbox.send(
                MQTTMessage(
                    topic: defaultReplyTopic,
                    payload: SetResult.failure(error: "gattway.Error.\(refusal.errorKind)", message: "\(refusal)")
                        .payload(transaction: nil),
                    qos: .atLeastOnce))
        }
        return false
    }

    /// Counts and logs (rate-limited) a command whose payload the codec or the envelope parser refused.
    func noteInvalidCommand(_ message: MQTTMessage, _ error: some Error) {
        Counter(label: "gattway.mqtt.commands_refused", dimensions: [("reason", "invalid_payload")]).increment()
        let decision = refusals.report("invalid", topic: message.topic, at: started.duration(to: clock.now))
        if case .log(let suppressed) = decision {
            logger.notice(
                "mqtt.command.invalid",
                metadata: [
                    "mqtt.topic": "\(PayloadExcerpt.quote(Array(message.topic.utf8), maximumBytes: 128))",
                    "error": "\(error)", "suppressed_since_last": "\(suppressed)",
                ])
        }
    }
}
