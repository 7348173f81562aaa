import BridgeCore
import MQTTCore
import Synchronization

/// The synchronous way of a source value. On the loop where the peripheral's MQTT client delivers its messages
/// (the bus connection's loop, where the notification links are watched and PropertiesChanged is sent), a value is
/// encoded, stored and sent to every idle subscriber in the same turn that read it: no stream, task or actor hop.
///
/// What it cannot finish at once it leaves, whole, to the bridge's consumer of `messages`, which handles it as
/// before: a refusal (counted and logged there), a request, and a value for a characteristic under backpressure
/// whose subscriber's queue is full (the consumer waits, so the client's buffer fills and its socket reads pause).
/// Order is kept: once a message was left to the consumer, every later one is left too, until the consumer has
/// handled them all. Subscribers that are not idle (values queued, a link full, an indication awaiting its
/// confirmation) get the value queued, and their own tasks send it, as on the consumer's way.
final class SourceFastPath: Sendable {
    private let channelsBySource: [String: [CharacteristicChannel]]
    private let sourceLimit: Int
    private let values: PeripheralValueStore
    /// The source topic seen last and its channels: values come in runs on one topic, and comparing the topic with
    /// the last one costs less than hashing it.
    private let lastSource = Mutex(LastSource())
    /// Messages left to the consumer and not yet handled by it.
    private let leftToConsumer = Atomic<Int>(0)

    private struct LastSource {
        var topic = ""
        var channels: [CharacteristicChannel]?
    }

    init(channelsBySource: [String: [CharacteristicChannel]], sourceLimit: Int, values: PeripheralValueStore) {
        self.channelsBySource = channelsBySource
        self.sourceLimit = sourceLimit
        self.values = values
    }

    private func channels(of topic: String) -> [CharacteristicChannel]? {
        lastSource.withLock { last in
            if last.channels != nil, last.topic == topic { return last.channels }
            guard let channels = channelsBySource[topic] else { return nil }
            last = LastSource(topic: topic, channels: channels)
            return channels
        }
    }

    /// The MQTT client's inbound tap, on its loop: true when the message was handled here, false when it is left
    /// to the consumer.
    func take(_ message: MQTTMessage) -> Bool {
        if leftToConsumer.load(ordering: .acquiring) == 0, deliverAtOnce(message) { return true }
        leftToConsumer.wrappingAdd(1, ordering: .relaxed)
        return false
    }

    /// The consumer has handled one message left to it (its values are offered, or it was refused).
    func consumerHandled() {
        leftToConsumer.wrappingSubtract(1, ordering: .releasing)
    }

    /// Offers the message's value to every channel of its topic, or does nothing and returns false. While nothing
    /// is left to the consumer this is the only producer, so a channel found with room still has it when offered.
    private func deliverAtOnce(_ message: MQTTMessage) -> Bool {
        guard let channels = channels(of: message.topic), message.oversizePayloadLength == nil,
            message.payload.count <= sourceLimit
        else { return false }
        if channels.count == 1 {
            let channel = channels[0]
            guard let value = Self.value(of: message, for: channel), channel.offerNow(value, sendingAtOnce: true)
            else { return false }
            values.set(value, channel: channel.id)
            return true
        }
        var encoded: [[UInt8]] = []
        encoded.reserveCapacity(channels.count)
        for channel in channels {
            guard let value = Self.value(of: message, for: channel), channel.hasRoomForProducer else { return false }
            encoded.append(value)
        }
        for (channel, value) in zip(channels, encoded) {
            _ = channel.offerNow(value, sendingAtOnce: true)
            values.set(value, channel: channel.id)
        }
        return true
    }

    /// The characteristic's value for the message, nil when the consumer must refuse it (with its reason).
    private static func value(of message: MQTTMessage, for channel: CharacteristicChannel) -> [UInt8]? {
        guard let value = try? channel.configuration.codec.encode(payload: message.payload),
            value.count <= min(channel.configuration.maxLength, 512)
        else { return nil }
        return value
    }
}
