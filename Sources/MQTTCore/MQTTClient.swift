package import Polling

/// A change of an MQTT client's link to the broker.
package enum MQTTConnectionEvent: Sendable, Equatable {
    /// CONNACK accepted: the client is connected (again). The broker has published our Last Will if the link
    /// dropped before, so retained state announced on connect must be announced again.
    case connected
    case disconnected(MQTTError)
}

/// What `MQTTClient.publishOnLoop` did with a batch.
package struct MQTTQueuePublishResult: Sendable, Equatable {
    /// How many messages, from the start, were handled (published, or failed and counted in `failed`).
    package var taken: Int
    /// Of those, how many could not be published (QoS 0 while disconnected, or refused by the client).
    package var failed: Int

    package init(taken: Int, failed: Int) {
        self.taken = taken
        self.failed = failed
    }
}

/// The MQTT client as the bridges use it: the port between them and a broker.
///
/// `MosquittoClient` is the production conformer; `BridgeTesting.InMemoryMQTTBroker` hands out in-memory ones.
/// Two ways to publish exist because the notification hot path must not hop: `publish` is the ordinary awaitable
/// one, while `publishOnLoop` is synchronous and runs on `publishLoop`, where code that reads values (a
/// notification socket's watch, say) already runs.
package protocol MQTTClient: AnyObject, Sendable {
    /// Received messages, in order, with the client's inbound backpressure. Single consumer.
    var messages: MQTTInboundStream { get }

    /// Hands every received message first to `tap`, on `publishLoop`, in order of arrival, before it is buffered
    /// for `messages`: a message `tap` returns true for is consumed there (it never reaches `messages`); one it
    /// returns false for is buffered as usual. The tap must keep the order itself: once it left a message to
    /// `messages`, it may take no later one until that one has been consumed. One tap per client; set it before the
    /// client runs so no message passes it.
    func tapInbound(_ tap: @escaping @Sendable (MQTTMessage) -> Bool)

    /// Link changes. Single consumer.
    var connectionEvents: AsyncStream<MQTTConnectionEvent> { get }

    /// True while a CONNACK-confirmed link is up.
    var isConnected: Bool { get async }

    /// Publishes `message`, waiting for capacity (an outstanding slot for QoS 1/2, room in the output buffer for
    /// QoS 0) but not for the acknowledgement. QoS 0 while disconnected throws `MQTTError.notConnected`.
    func publish(_ message: MQTTMessage) async throws

    /// Publishes `messages` in order in one hop to the client, waiting for capacity as `publish` does.
    func publish(contentsOf messages: [MQTTMessage]) async throws

    /// Subscribes to `filter` and keeps the subscription across reconnects. `options` (No Local, Retain Handling)
    /// apply with MQTT 5 only.
    func subscribe(_ filter: String, qos: MQTTQoS, options: MQTTSubscriptionOptions) async throws

    /// Unsubscribes from `filter` and forgets it.
    func unsubscribe(_ filter: String) async throws

    /// The loop `publishOnLoop` must be called on.
    var publishLoop: PollLoop { get }

    /// Publishes from code already running on `publishLoop`, without suspending: messages are taken in order
    /// while there is capacity. When not all were taken, `onCapacity` runs once on `publishLoop` as soon as
    /// capacity returns, so the caller can offer the rest then.
    ///
    /// - Precondition: called on `publishLoop`.
    func publishOnLoop(
        _ messages: ArraySlice<MQTTMessage>, onCapacity: @escaping @Sendable () -> Void
    ) -> MQTTQueuePublishResult

    /// `publishOnLoop` of a single message, which a caller sending one at a time need not put in an array first.
    ///
    /// - Precondition: called on `publishLoop`.
    func publishOnLoop(
        _ message: MQTTMessage, onCapacity: @escaping @Sendable () -> Void
    ) -> MQTTQueuePublishResult
}

extension MQTTClient {
    package func publishOnLoop(
        _ message: MQTTMessage, onCapacity: @escaping @Sendable () -> Void
    ) -> MQTTQueuePublishResult {
        publishOnLoop([message][...], onCapacity: onCapacity)
    }
}
