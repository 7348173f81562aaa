import DequeModule
package import MQTTCore
import Polling
import Synchronization

/// A broker in memory for the bridges' unit tests: real topic-filter matching (`MQTTTopicFilter`), retained
/// messages, Last Will, and the MQTT 5 subscription options the bridges use (No Local, Retain Handling 2).
///
/// Every publish of every client is applied under one lock, so all clients see all messages in the order they were
/// published, whatever their QoS. A client that is disconnected receives nothing (clean start) and is subscribed
/// again, with retained messages sent again, when it reconnects, as `MosquittoClient` re-subscribes after a
/// reconnect. Every broker is an instance with no global state, so suites run in parallel.
package final class InMemoryMQTTBroker: Sendable {
    /// One message as the broker accepted it, with the client that published it.
    package struct Publication: Sendable, Equatable {
        package var clientID: String
        package var message: MQTTMessage
    }

    struct Session {
        var connected = true
        var subscriptions: [(filter: MQTTTopicFilter, options: MQTTSubscriptionOptions)] = []
        var inbound: Deque<MQTTMessage> = []
        var inboundWaiter: CheckedContinuation<[MQTTMessage], Never>?
        /// QoS 1/2 publishes made while disconnected: sent on reconnect, as libmosquitto does.
        var offlineQueue: [MQTTMessage] = []
        var will: MQTTMessage?
        var stopped = false
        /// The client's inbound tap and its loop: every delivery then goes through that loop, in order, and is
        /// buffered only when the tap leaves it.
        var tap: (loop: PollLoop, take: @Sendable (MQTTMessage) -> Bool)?
    }

    struct LogWaiter {
        let filter: MQTTTopicFilter
        let since: Int
        let predicate: @Sendable (MQTTMessage) -> Bool
        let continuation: CheckedContinuation<MQTTMessage?, Never>
    }

    struct State {
        var retained: [String: MQTTMessage] = [:]
        var sessions: [String: Session] = [:]
        var log: [Publication] = []
        var logWaiters: [UInt64: LogWaiter] = [:]
        var nextWaiterID: UInt64 = 0
    }

    let state = Mutex(State())
    /// Every subscription made, as "client id: filter", in order: tests wait on it before sending commands.
    package let subscriptionLog = RecordedLog<String>()

    package init() {}

    /// A new connected client. `will` is published (retained as it says) when the client drops without a
    /// DISCONNECT (`InMemoryMQTTClient.dropConnection`).
    package func makeClient(id: String, will: MQTTMessage? = nil) -> InMemoryMQTTClient {
        state.withLock { state in
            precondition(state.sessions[id] == nil, "client id \(id) is already in use")
            state.sessions[id] = Session(will: will)
        }
        return InMemoryMQTTClient(id: id, broker: self)
    }

    /// The retained message of each topic.
    package var retainedMessages: [String: MQTTMessage] { state.withLock { $0.retained } }

    /// Every message accepted so far, in order.
    package var publications: [Publication] { state.withLock { $0.log } }

    /// How many messages were accepted so far: a mark for `nextPublished(on:since:)`.
    package var publicationCount: Int { state.withLock { $0.log.count } }

    /// Messages accepted on topics matching `filter`, in order.
    package func published(on filter: String) -> [MQTTMessage] {
        let filter = try! MQTTTopicFilter(filter)  // a test's own constant
        return state.withLock { $0.log.map(\.message).filter { filter.matches($0.topic) } }
    }

    /// The first message accepted at or after position `since` on a topic matching `filter` (and `predicate`),
    /// waiting for it for at most `timeout`.
    ///
    /// - Throws: `InMemoryMQTTBroker.Timeout` when none arrives in time.
    package func nextPublished(
        on filter: String, since: Int = 0, timeout: Duration = .seconds(30),
        where predicate: @escaping @Sendable (MQTTMessage) -> Bool = { _ in true }
    ) async throws -> MQTTMessage {
        let filter = try MQTTTopicFilter(filter)
        let id = state.withLock { state in
            state.nextWaiterID += 1
            return state.nextWaiterID
        }
        let found: MQTTMessage? = await withDeadline(timeout) {
            await withCheckedContinuation { continuation in
                self.state.withLock { state in
                    if let hit = state.log[min(since, state.log.count)...].first(where: {
                        filter.matches($0.message.topic) && predicate($0.message)
                    }) {
                        continuation.resume(returning: hit.message)
                    } else {
                        state.logWaiters[id] = LogWaiter(
                            filter: filter, since: since, predicate: predicate, continuation: continuation)
                    }
                }
            }
        } onTimeout: {
            self.state.withLock { $0.logWaiters.removeValue(forKey: id) }?.continuation.resume(returning: nil)
        }
        guard let found else { throw Timeout(filter: filter.rawValue, after: timeout) }
        return found
    }

    /// No matching message was published before the deadline.
    package struct Timeout: Error, CustomStringConvertible {
        package let filter: String
        package let after: Duration
        package var description: String { "nothing published on \(filter) within \(after)" }
    }

    // MARK: - Used by the clients

    /// Accepts `message` from `clientID`: stores or clears the retained message, delivers it to every connected
    /// client with a matching subscription (once per client), and wakes waiting observers.
    func accept(_ message: MQTTMessage, from clientID: String, in state: inout State) {
        if message.retain {
            if message.payload.isEmpty {
                state.retained[message.topic] = nil
            } else {
                state.retained[message.topic] = message
            }
        }
        state.log.append(Publication(clientID: clientID, message: message))
        var delivered = message
        delivered.retain = false  // MQTT 5 Retain As Published is 0: live deliveries carry no retain flag
        for (id, session) in state.sessions where session.connected && !session.stopped {
            let wanted = session.subscriptions.contains { subscription in
                subscription.filter.matches(message.topic) && !(subscription.options.noLocal && id == clientID)
            }
            if wanted { deliver(delivered, to: id, in: &state) }
        }
        let index = state.log.count - 1
        for (id, waiter) in state.logWaiters
        where waiter.since <= index && waiter.filter.matches(message.topic) && waiter.predicate(message) {
            state.logWaiters[id] = nil
            waiter.continuation.resume(returning: message)
        }
    }

    func deliver(_ message: MQTTMessage, to clientID: String, in state: inout State) {
        if let tap = state.sessions[clientID]?.tap {
            tap.loop.execute { [self] in
                if tap.take(message) { return }
                self.state.withLock { buffer(message, for: clientID, in: &$0) }
            }
            return
        }
        buffer(message, for: clientID, in: &state)
    }

    /// Hands `message` to the client's waiting consumer, or keeps it for the next one.
    private func buffer(_ message: MQTTMessage, for clientID: String, in state: inout State) {
        guard var session = state.sessions[clientID] else { return }
        if let waiter = session.inboundWaiter {
            session.inboundWaiter = nil
            waiter.resume(returning: [message])
        } else {
            session.inbound.append(message)
        }
        state.sessions[clientID] = session
    }

    /// Sends the retained messages matching `filter` to `clientID`, as a new subscription gets them.
    func sendRetained(matching filter: MQTTTopicFilter, to clientID: String, in state: inout State) {
        for message in state.retained.values.sorted(by: { $0.topic < $1.topic }) where filter.matches(message.topic) {
            deliver(message, to: clientID, in: &state)
        }
    }
}

/// Runs `operation`, calling `onTimeout` (which must make `operation` return) if it has not returned after
/// `timeout`; the result is whatever `operation` returns.
func withDeadline<T: Sendable>(
    _ timeout: Duration, _ operation: @escaping @Sendable () async -> T, onTimeout: @escaping @Sendable () -> Void
) async -> T {
    await withTaskGroup(of: T?.self) { group in
        group.addTask { await operation() }
        group.addTask {
            do { try await Task.sleep(for: timeout) } catch { return nil }  // the operation finished first
            onTimeout()
            return nil
        }
        var result: T?
        for await value in group {
            if let value {
                result = value
                group.cancelAll()
            }
        }
        return result!
    }
}
