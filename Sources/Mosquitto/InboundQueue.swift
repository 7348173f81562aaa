import DequeModule
import MQTTCore

/// A FIFO of received messages that counts the payload bytes it holds, so the client can bound the buffer in bytes
/// as well as in messages.
struct InboundQueue {
    private var messages = Deque<MQTTMessage>()
    /// Payload bytes of the messages waiting.
    private(set) var byteCount = 0

    var count: Int { messages.count }
    var isEmpty: Bool { messages.isEmpty }

    mutating func append(_ message: MQTTMessage) {
        messages.append(message)
        byteCount += message.payload.count
    }

    /// Removes and returns up to `maximum` messages from the head.
    mutating func take(_ maximum: Int) -> [MQTTMessage] {
        let batch = Array(messages.prefix(maximum))
        messages.removeFirst(batch.count)
        for message in batch { byteCount -= message.payload.count }
        return batch
    }
}
