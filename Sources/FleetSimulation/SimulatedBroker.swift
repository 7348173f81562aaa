/// A message as the simulated broker carries it. A nil payload on a retained message clears the retained value.
package struct SimulatedMessage<Payload: Sendable>: Sendable {
    package var topic: String
    package var payload: Payload?
    package var retain: Bool

    package init(topic: String, payload: Payload?, retain: Bool) {
        self.topic = topic
        self.payload = payload
        self.retain = retain
    }
}

/// A message handed to a client.
package struct SimulatedDelivery<Payload: Sendable>: Sendable {
    package var time: Int64
    package var client: Int
    package var message: SimulatedMessage<Payload>
}

/// An MQTT 3.1.1 broker in virtual time, with what the fleet protocol relies on and no more: one connection per
/// client with its own latency (so messages from different clients overtake each other), each client's packets
/// kept in order in both directions, retained messages (sent on subscribe), `+`/`#` filters, clean sessions,
/// Last Wills published when the broker notices a client is gone (between 1 and 1.5 keepalives after its last
/// packet), and partitions (a client's packets in flight are lost both ways).
package final class SimulatedBroker<Payload: Sendable> {
    package struct Statistics: Sendable, Equatable {
        /// PUBLISH packets the broker received (Last Wills included).
        package var published = 0
        /// PUBLISH packets the broker sent to subscribers.
        package var delivered = 0
        /// Packets lost in partitions.
        package var lost = 0
    }

    private enum Uplink {
        case connect(will: SimulatedMessage<Payload>?)
        case publish(SimulatedMessage<Payload>)
        case subscribe(String)
        case unsubscribe(String)
    }

    private enum Traffic {
        case uplink(client: Int, connection: Int, Uplink)
        case downlink(client: Int, connection: Int, SimulatedMessage<Payload>)
        case willDue(client: Int, connection: Int)
    }

    private struct Client {
        var latency: Int64
        /// Raised by every connect and every partition: packets of an older connection are dropped.
        var connection = 0
        /// The broker holds a session (until a clean disconnect or the Last Will).
        var sessionOpen = false
        /// The network path works.
        var reachable = true
        var will: SimulatedMessage<Payload>?
        var filters: Set<String> = []
        var lastUplinkArrival: Int64 = 0
        var lastDownlinkArrival: Int64 = 0
    }

    package private(set) var statistics = Statistics()
    private var queue = SimulationQueue<Traffic>()
    private var random: SeededRandom
    private var clients: [Int: Client] = [:]
    private var retained: [String: Payload] = [:]
    /// Exact filters, and filters with wildcards, each with its subscribers.
    private var exactSubscribers: [String: Set<Int>] = [:]
    private var wildcardSubscribers: [String: Set<Int>] = [:]
    private let latency: ClosedRange<Int64>
    private let jitter: ClosedRange<Int64>
    private let keepalive: Int64

    /// - Parameters:
    ///   - latency: each client's one-way latency (ms) is drawn from this once.
    ///   - jitter: added to every packet (ms); order per client and direction is kept regardless.
    ///   - keepalive: the clients' MQTT keepalive (ms).
    package init(
        seed: UInt64, latency: ClosedRange<Int64> = 2...40, jitter: ClosedRange<Int64> = 0...20,
        keepalive: Int64 = 5_000
    ) {
        random = SeededRandom(seed: seed)
        self.latency = latency
        self.jitter = jitter
        self.keepalive = keepalive
    }

    /// The time of the next packet the broker will move, if any.
    package var nextTime: Int64? { queue.nextTime }

    /// The retained value of `topic` now.
    package func retainedValue(of topic: String) -> Payload? { retained[topic] }

    // MARK: What clients do

    /// Opens a (clean) session; the client's later packets follow it in order.
    package func connect(_ client: Int, will: SimulatedMessage<Payload>?, at now: Int64) {
        var state = clients[client] ?? Client(latency: random.integer(in: latency))
        state.connection += 1
        state.reachable = true
        clients[client] = state
        send(.connect(will: will), from: client, at: now)
    }

    package func publish(_ message: SimulatedMessage<Payload>, from client: Int, at now: Int64) {
        send(.publish(message), from: client, at: now)
    }

    package func subscribe(_ filter: String, from client: Int, at now: Int64) {
        send(.subscribe(filter), from: client, at: now)
    }

    package func unsubscribe(_ filter: String, from client: Int, at now: Int64) {
        send(.unsubscribe(filter), from: client, at: now)
    }

    /// The client's process dies (or its host): the broker publishes its Last Will once it notices.
    package func kill(_ client: Int, at now: Int64) { cut(client, at: now) }

    /// The network between the client and the broker fails; each side notices on its own.
    package func partition(_ client: Int, at now: Int64) { cut(client, at: now) }

    // MARK: Running

    /// Moves the next packet; returns it when it is one a client receives.
    package func step() -> SimulatedDelivery<Payload>? {
        guard let (time, traffic) = queue.popNext() else { return nil }
        switch traffic {
        case .uplink(let client, let connection, let packet):
            guard let state = clients[client], state.connection == connection, state.reachable else {
                statistics.lost += 1
                return nil
            }
            receive(packet, from: client, at: time)
        case .downlink(let client, let connection, let message):
            guard let state = clients[client], state.connection == connection, state.reachable else {
                statistics.lost += 1
                return nil
            }
            return SimulatedDelivery(time: time, client: client, message: message)
        case .willDue(let client, let connection):
            guard let state = clients[client], state.connection == connection, state.sessionOpen else { return nil }
            closeSession(client)
            if let will = state.will { route(will, at: time) }
        }
        return nil
    }

    private func cut(_ client: Int, at now: Int64) {
        guard var state = clients[client] else { return }
        state.reachable = false
        clients[client] = state
        if state.sessionOpen {
            queue.schedule(
                .willDue(client: client, connection: state.connection),
                at: now + random.integer(in: keepalive...(keepalive * 3 / 2)))
        }
    }

    private func send(_ packet: Uplink, from client: Int, at now: Int64) {
        guard var state = clients[client] else { return }
        let arrival = max(state.lastUplinkArrival, now + state.latency + random.integer(in: jitter))
        state.lastUplinkArrival = arrival
        clients[client] = state
        queue.schedule(.uplink(client: client, connection: state.connection, packet), at: arrival)
    }

    private func receive(_ packet: Uplink, from client: Int, at now: Int64) {
        switch packet {
        case .connect(let will):
            // A new connection replaces the old session without its Last Will (the client is back).
            closeSession(client)
            clients[client]?.sessionOpen = true
            clients[client]?.will = will
        case .publish(let message):
            route(message, at: now)
        case .subscribe(let filter):
            guard clients[client]?.sessionOpen == true else { return }
            clients[client]?.filters.insert(filter)
            if Self.isWildcard(filter) {
                wildcardSubscribers[filter, default: []].insert(client)
                for topic in retained.keys.sorted() where Self.matches(filter, topic) {
                    deliver(SimulatedMessage(topic: topic, payload: retained[topic], retain: true), to: client, at: now)
                }
            } else {
                exactSubscribers[filter, default: []].insert(client)
                if let payload = retained[filter] {
                    deliver(SimulatedMessage(topic: filter, payload: payload, retain: true), to: client, at: now)
                }
            }
        case .unsubscribe(let filter):
            removeSubscription(filter, of: client)
        }
    }

    private func route(_ message: SimulatedMessage<Payload>, at now: Int64) {
        statistics.published += 1
        if message.retain {
            retained[message.topic] = message.payload
        }
        var receivers = exactSubscribers[message.topic].map(Array.init) ?? []
        for (filter, subscribers) in wildcardSubscribers where Self.matches(filter, message.topic) {
            receivers.append(contentsOf: subscribers)
        }
        // Sorted: a Set's order changes from process to process, a simulation's must not.
        for client in Set(receivers).sorted() {
            // MQTT 3.1.1: a message routed live carries retain 0.
            deliver(
                SimulatedMessage(topic: message.topic, payload: message.payload, retain: false), to: client, at: now)
        }
    }

    private func deliver(_ message: SimulatedMessage<Payload>, to client: Int, at now: Int64) {
        guard var state = clients[client] else { return }
        statistics.delivered += 1
        let arrival = max(state.lastDownlinkArrival, now + state.latency + random.integer(in: jitter))
        state.lastDownlinkArrival = arrival
        clients[client] = state
        queue.schedule(.downlink(client: client, connection: state.connection, message), at: arrival)
    }

    private func closeSession(_ client: Int) {
        guard let state = clients[client] else { return }
        for filter in state.filters.sorted() { removeSubscription(filter, of: client) }
        clients[client]?.sessionOpen = false
        clients[client]?.filters = []
    }

    private func removeSubscription(_ filter: String, of client: Int) {
        clients[client]?.filters.remove(filter)
        if Self.isWildcard(filter) {
            wildcardSubscribers[filter]?.remove(client)
        } else {
            exactSubscribers[filter]?.remove(client)
            if exactSubscribers[filter]?.isEmpty == true { exactSubscribers[filter] = nil }
        }
    }

    static func isWildcard(_ filter: String) -> Bool { filter.contains("+") || filter.contains("#") }

    /// MQTT topic matching with `+` (one level) and a trailing `#` (any levels, also none).
    static func matches(_ filter: String, _ topic: String) -> Bool {
        let filterLevels = filter.split(separator: "/", omittingEmptySubsequences: false)
        let topicLevels = topic.split(separator: "/", omittingEmptySubsequences: false)
        for (index, level) in filterLevels.enumerated() {
            if level == "#" { return true }
            guard index < topicLevels.count else { return false }
            if level != "+", level != topicLevels[index] { return false }
        }
        return filterLevels.count == topicLevels.count
    }
}
