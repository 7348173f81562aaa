import MQTTCore

/// The messages a `MosquittoClient` receives, in order. Single consumer.
///
/// Each step takes up to 64 buffered messages in one hop to the client, which counts them as consumed (and may
/// resume reading the socket). Ends when the client has stopped and its buffer is empty, or when the consuming
/// task is cancelled.
package struct MQTTInboundStream: AsyncSequence, Sendable {
    package typealias Element = MQTTMessage
    package typealias Failure = Never

    let client: MosquittoClient

    package struct AsyncIterator: AsyncIteratorProtocol {
        package typealias Element = MQTTMessage
        package typealias Failure = Never

        let client: MosquittoClient
        var batch: [MQTTMessage] = []
        var index = 0

        package mutating func next() async -> MQTTMessage? {
            if index == batch.count {
                batch = await client.takeInbound(maximum: 64)
                index = 0
                if batch.isEmpty { return nil }
            }
            defer { index += 1 }
            return batch[index]
        }
    }

    package func makeAsyncIterator() -> AsyncIterator { AsyncIterator(client: client) }
}
