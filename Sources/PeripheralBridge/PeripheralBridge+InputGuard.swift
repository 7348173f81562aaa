import BridgeCore
import Logging
import MQTTCore
import Metrics

extension PeripheralBridge {
    /// Counts and logs (rate-limited) a source message whose value is not used; the characteristic keeps its value.
    func refuseSource(_ message: MQTTMessage, reason: String, channel: CharacteristicChannel?, _ why: String) {
        Counter(label: "gattway.peripheral.source_values_refused", dimensions: [("reason", reason)]).increment()
        if case .log(let suppressed) = refusals.report(
            reason, topic: message.topic, at: started.duration(to: clock.now))
        {
            logger.notice(
                "peripheral.source.refused",
                metadata: [
                    "topic": "\(PayloadExcerpt.quote(Array(message.topic.utf8), maximumBytes: 128))",
                    "characteristic": "\(channel?.name ?? "-")", "reason": "\(reason)", "error": "\(why)",
                    "payload.excerpt": "\(PayloadExcerpt.quote(message.payload))",
                    "suppressed_since_last": "\(suppressed)",
                ])
        }
    }

    /// Checks `bridge/request/advertise` before it is parsed (see `CommandRefusal`); a refusal is counted, logged
    /// (rate-limited) and answered on `bridge/response/advertise`.
    func admitRequest(_ message: MQTTMessage) async -> Bool {
        guard
            let refusal = CommandRefusal.check(
                retained: message.retain, payloadSize: message.oversizePayloadLength ?? message.payload.count,
                limit: payloadLimits.request, responseTopic: message.properties.responseTopic, rule: responseTopicRule)
        else { return true }
        Counter(label: "gattway.mqtt.commands_refused", dimensions: [("reason", refusal.metricReason)]).increment()
        let decision = refusals.report(refusal, topic: message.topic, at: started.duration(to: clock.now))
        if case .log(let suppressed) = decision {
            logger.warning(
                "mqtt.command.refused",
                metadata: [
                    "mqtt.topic": "\(PayloadExcerpt.quote(Array(message.topic.utf8), maximumBytes: 128))",
                    "reason": "\(refusal.metricReason)", "error": "\(refusal)",
                    "suppressed_since_last": "\(suppressed)",
                ])
        }
        let reply = MQTTMessage(
            topic: topics.bridgeResponse("advertise"),
            payload: SetResult.failure(error: "gattway.Error.\(refusal.errorKind)", message: "\(refusal)")
                .payload(transaction: nil),
            qos: .atLeastOnce)
        do { try await mqtt.publish(reply) } catch {
            logger.warning("peripheral.response.failed", metadata: ["error": "\(error)"])
        }
        return false
    }
}
