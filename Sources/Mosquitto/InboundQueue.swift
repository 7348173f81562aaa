import MQTTCore

/// A FIFO of received messages: appends at the tail, takes batches from the head without shifting every time.
/// It counts the payload bytes it holds, so the client can bound the buffer in bytes as well as in messages.
struct InboundQueue {
    private var storage: [MQTTMessage] = []
    private var head = 0
    /// Payload bytes of the messages waiting.
    private(set) var byteCount = 0

    var count: Int { storage.count - head }
    var isEmpty: Bool { count == 0 }

    mutating func append(_ message: MQTTMessage) {
        storage.append(message)
        byteCount += message.payload.count
    }

    /// Removes and returns up to `maximum` messages from the head.
    mutating func take(_ maximum: Int) -> [MQTTMessage] {
        let end = min(storage.count, head + maximum)
        let batch = Array(storage[head..<end])
        for message in batch { byteCount -= message.payload.count }
        head = end
        // Compact once the consumed prefix dominates, so memory follows the live count.
        if head == storage.count {
            storage.removeAll(keepingCapacity: true)
            head = 0
        } else if head > 1024 && head * 2 > storage.count {
            storage.removeFirst(head)
            head = 0
        }
        return batch
    }
}
