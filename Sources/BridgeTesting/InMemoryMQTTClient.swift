package import MQTTCore
package import Polling
import Synchronization

/// One client of an `InMemoryMQTTBroker`, conforming to the bridges' `MQTTClient` port.
///
/// It has unbounded capacity unless the test bounds it (`limitCapacity(to:)`, then `grantCapacity(_:)`, as a real
/// client's output buffer fills and drains): `publishOnLoop` takes messages while there is capacity (QoS 0 ones
/// fail while disconnected, as with a real client). Link changes are driven by the test: `dropConnection()` (the
/// broker publishes the Last Will) and `reconnect()`.
package final class InMemoryMQTTClient: MQTTClient {
    package let id: String
    let broker: InMemoryMQTTBroker
    package let publishLoop: PollLoop
    package let connectionEvents: AsyncStream<MQTTConnectionEvent>
    let events: AsyncStream<MQTTConnectionEvent>.Continuation
    /// Messages `publishOnLoop` may still take (nil: no bound), and the callers waiting for more.
    private let capacity = Mutex<(remaining: Int?, waiting: [@Sendable () -> Void])>((nil, []))

    init(id: String, broker: InMemoryMQTTBroker) {
        self.id = id
        self.broker = broker
        do {
            publishLoop = try PollLoop(name: "mqtt.mem.\(id)")
        } catch {
            fatalError("the in-memory client \(id) cannot start its loop: \(error)")
        }
        // Unbounded: a test makes a handful of link changes, and a bridge that missed one would be a false result.
        (connectionEvents, events) = AsyncStream.makeStream(of: MQTTConnectionEvent.self)
        events.yield(.connected)
    }

    package var messages: MQTTInboundStream {
        MQTTInboundStream { [self] maximum in await self.takeInbound(maximum: maximum) }
    }

    package var isConnected: Bool {
        broker.state.withLock { $0.sessions[id]?.connected ?? false }
    }

    package func publish(_ message: MQTTMessage) async throws {
        try publishNow(message)
    }

    package func publish(contentsOf messages: [MQTTMessage]) async throws {
        for message in messages { try publishNow(message) }
    }

    package func subscribe(_ filter: String, qos: MQTTQoS, options: MQTTSubscriptionOptions) async throws {
        let parsed = try MQTTTopicFilter(filter)
        broker.state.withLock { state in
            guard var session = state.sessions[id] else { return }
            session.subscriptions.removeAll { $0.filter == parsed }
            session.subscriptions.append((parsed, options))
            state.sessions[id] = session
            if session.connected && !options.neverSendRetained {
                broker.sendRetained(matching: parsed, to: id, in: &state)
            }
        }
        broker.subscriptionLog.append("\(id): \(filter)")
    }

    package func unsubscribe(_ filter: String) async throws {
        let parsed = try MQTTTopicFilter(filter)
        broker.state.withLock { $0.sessions[id]?.subscriptions.removeAll { $0.filter == parsed } }
    }

    /// Whether everything handed to this client has been taken in: its loop has run what it was given (publishes,
    /// tapped deliveries), nothing waits in its inbound buffer, and its consumer (if it is stopped, none) is back
    /// waiting for more, so every message it took has been handled. A test harness moving a simulated clock waits
    /// for this so that simulated time never runs ahead of messages still in flight.
    package func isIdle() async -> Bool {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            publishLoop.execute { continuation.resume() }
        }
        return broker.state.withLock { state in
            guard let session = state.sessions[id] else { return true }
            return session.stopped || (session.inbound.isEmpty && session.inboundWaiter != nil)
        }
    }

    /// From now on every message for this client goes through `publishLoop` to `tap` first (see the port).
    package func tapInbound(_ tap: @escaping @Sendable (MQTTMessage) -> Bool) {
        let loop = publishLoop
        broker.state.withLock { $0.sessions[id]?.tap = (loop, tap) }
    }

    package func publishOnLoop(
        _ messages: ArraySlice<MQTTMessage>, onCapacity: @escaping @Sendable () -> Void
    ) -> MQTTQueuePublishResult {
        publishLoop.checkIsolated()
        var result = MQTTQueuePublishResult(taken: 0, failed: 0)
        for message in messages {
            let hasRoom = capacity.withLock { capacity -> Bool in
                guard let remaining = capacity.remaining else { return true }
                guard remaining > 0 else {
                    capacity.waiting.append(onCapacity)
                    return false
                }
                capacity.remaining = remaining - 1
                return true
            }
            guard hasRoom else { return result }
            do { try publishNow(message) } catch { result.failed += 1 }
            result.taken += 1
        }
        return result
    }

    /// From now on `publishOnLoop` takes at most `count` more messages until `grantCapacity` adds room.
    package func limitCapacity(to count: Int) {
        capacity.withLock { $0.remaining = count }
    }

    /// Room for `count` more messages; the callers that found none run on `publishLoop`, each once, as a real
    /// client's do when its buffer drains.
    package func grantCapacity(_ count: Int) {
        let waiting = capacity.withLock { capacity -> [@Sendable () -> Void] in
            capacity.remaining = (capacity.remaining ?? 0) + count
            defer { capacity.waiting = [] }
            return capacity.waiting
        }
        for callback in waiting { publishLoop.execute(callback) }
    }

    /// The filters this client is subscribed to, in the order they were made.
    package var subscriptions: [(filter: String, options: MQTTSubscriptionOptions)] {
        broker.state.withLock { state in
            (state.sessions[id]?.subscriptions ?? []).map { ($0.filter.rawValue, $0.options) }
        }
    }

    /// The link drops without DISCONNECT: the broker publishes the Last Will and the client reports the loss.
    package func dropConnection() {
        broker.state.withLock { state in
            guard var session = state.sessions[id], session.connected else { return }
            session.connected = false
            state.sessions[id] = session
            if let will = session.will { broker.accept(will, from: id, in: &state) }
        }
        events.yield(.disconnected(.connectionLost(reason: "dropped by the test")))
    }

    /// The link comes back: subscriptions are made again (retained messages sent again), QoS 1/2 messages queued
    /// while offline are published, and the client reports `.connected`.
    package func reconnect() {
        broker.state.withLock { state in
            guard var session = state.sessions[id], !session.connected else { return }
            session.connected = true
            let queued = session.offlineQueue
            session.offlineQueue = []
            state.sessions[id] = session
            for subscription in session.subscriptions where !subscription.options.neverSendRetained {
                broker.sendRetained(matching: subscription.filter, to: id, in: &state)
            }
            for message in queued { broker.accept(message, from: id, in: &state) }
        }
        events.yield(.connected)
    }

    /// Ends `messages` and `connectionEvents`, as a client whose `run()` returned.
    package func stop() {
        broker.state.withLock { state in
            state.sessions[id]?.stopped = true
            state.sessions[id]?.inboundWaiter?.resume(returning: [])
            state.sessions[id]?.inboundWaiter = nil
        }
        events.finish()
    }

    private func publishNow(_ message: MQTTMessage) throws(MQTTError) {
        try MQTTTopic.validate(message.topic)
        try broker.state.withLock { (state) throws(MQTTError) in
            guard var session = state.sessions[id], !session.stopped else {
                throw .clientStopped(operation: "publishing to \(message.topic)")
            }
            guard session.connected else {
                if message.qos == .atMostOnce { throw .notConnected(operation: "publishing to \(message.topic)") }
                session.offlineQueue.append(message)
                state.sessions[id] = session
                return
            }
            broker.accept(message, from: id, in: &state)
        }
    }

    private func takeInbound(maximum: Int) async -> [MQTTMessage] {
        await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                broker.state.withLock { state in
                    // Like a real client, a stopped one still hands out what it had buffered, then ends.
                    guard var session = state.sessions[id], !Task.isCancelled,
                        !(session.stopped && session.inbound.isEmpty)
                    else {
                        continuation.resume(returning: [])
                        return
                    }
                    if session.inbound.isEmpty {
                        session.inboundWaiter = continuation
                    } else {
                        let count = min(maximum, session.inbound.count)
                        continuation.resume(returning: Array(session.inbound.prefix(count)))
                        session.inbound.removeFirst(count)
                    }
                    state.sessions[id] = session
                }
            }
        } onCancel: {
            broker.state.withLock { state in
                state.sessions[id]?.inboundWaiter?.resume(returning: [])
                state.sessions[id]?.inboundWaiter = nil
            }
        }
    }
}
