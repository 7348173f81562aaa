/// The messages an `MQTTClient` receives, in order. Single consumer.
///
/// Each step takes a batch of up to 64 buffered messages in one call to the client (one hop for a real client),
/// which counts them as consumed and may resume reading its socket. Ends when `takeBatch` returns an empty batch:
/// the client has stopped and its buffer is empty, or the consuming task is cancelled.
package struct MQTTInboundStream: AsyncSequence, Sendable {
    package typealias Element = MQTTMessage
    package typealias Failure = Never

    /// Takes up to the given number of buffered messages, waiting for one; empty means the stream has ended.
    let takeBatch: @Sendable (Int) async -> [MQTTMessage]

    package init(takeBatch: @escaping @Sendable (_ maximum: Int) async -> [MQTTMessage]) {
        self.takeBatch = takeBatch
    }

    package struct AsyncIterator: AsyncIteratorProtocol {
        package typealias Element = MQTTMessage
        package typealias Failure = Never

        let takeBatch: @Sendable (Int) async -> [MQTTMessage]
        var batch: [MQTTMessage] = []
        var index = 0
        var ended = false

        package mutating func next() async -> MQTTMessage? {
            if ended { return nil }
            if index == batch.count {
                batch = await takeBatch(64)
                index = 0
                if batch.isEmpty {
                    ended = true
                    return nil
                }
            }
            defer { index += 1 }
            return batch[index]
        }
    }

    package func makeAsyncIterator() -> AsyncIterator { AsyncIterator(takeBatch: takeBatch) }
}
