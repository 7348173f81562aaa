import BridgeCore
import Dispatch
import Logging
import Synchronization
import BluetoothCore

/// One local characteristic: its current value, its subscribers and the backpressure between them and MQTT.
///
/// `deliver` is called by the single MQTT consumer. Under `backpressure` it suspends while any subscriber's
/// queue is full; since the consumer then stops taking messages, the MQTT client's inbound buffer fills, socket
/// reads pause and the broker holds (and slows) the publisher. Under the other policies it never waits and every
/// value a policy discards is counted in `drops`.
final class CharacteristicChannel: Sendable {
    let id: Int
    let name: String
    let configuration: PeripheralConfiguration.LocalCharacteristic
    let indicates: Bool
    private let state: Mutex<State>
    private let logger: Logger
    /// A backpressure wait longer than this is logged (and the wait goes on: the subscriber leaves on HUP).
    static let stallReportInterval: DispatchTimeInterval = .seconds(30)

    private struct State: Sendable {
        var value: [UInt8]
        var subscribers: [Int: any NotifySubscriber] = [:]
        var waiters: [UInt64: CheckedContinuation<Bool, Never>] = [:]
        var nextWaiter: UInt64 = 0
        var drops = 0
        /// Counters of subscribers that have gone, so totals never go backwards.
        var retired = SubscriberCounters()
    }

    init(id: Int, name: String, configuration: PeripheralConfiguration.LocalCharacteristic, logger: Logger) {
        self.id = id
        self.name = name
        self.configuration = configuration
        let flags = configuration.flags.impliedProperties
        indicates = flags.contains(.indicate) && !flags.contains(.notify)
        state = Mutex(State(value: configuration.initialValue ?? []))
        self.logger = logger
    }

    var value: [UInt8] { state.withLock { $0.value } }

    /// Sets the value and queues it for every subscriber, without waiting. False when backpressure applies and
    /// some subscriber's queue is full: nothing was queued, and the caller must `deliver` (which waits).
    ///
    /// Synchronous on purpose: the common case costs no task switch on the MQTT consumer's hot path.
    func offerNow(_ value: [UInt8]) -> Bool {
        state.withLock { state -> Bool in
            state.value = value
            if configuration.whenFull == .backpressure, state.subscribers.values.contains(where: { !$0.hasRoom }) {
                return false
            }
            for subscriber in state.subscribers.values {
                if case .dropped(let count) = subscriber.offer(value) { state.drops += count }
            }
            return true
        }
    }

    /// Like ``offerNow(_:)``, but waits for room under backpressure.
    func deliver(_ value: [UInt8]) async {
        var stalled = false
        while !offerNow(value) {
            if Task.isCancelled { return }
            let progressed = await waitForRoom()
            if !progressed && !stalled {
                stalled = true
                logger.warning("peripheral.backpressure.stalled", metadata: [
                    "characteristic": "\(name)", "waited": "\(Self.stallReportInterval)",
                ])
            }
        }
    }

    /// Waits until a subscriber made room (true) or the stall report interval passed (false).
    private func waitForRoom() async -> Bool {
        await withCheckedContinuation { continuation in
            let token = state.withLock { state -> UInt64? in
                guard state.subscribers.values.contains(where: { !$0.hasRoom }) else { return nil }
                state.nextWaiter += 1
                state.waiters[state.nextWaiter] = continuation
                return state.nextWaiter
            }
            guard let token else { return continuation.resume(returning: true) }
            DispatchQueue.global().asyncAfter(deadline: .now() + Self.stallReportInterval) { [weak self] in
                self?.state.withLock { $0.waiters.removeValue(forKey: token) }?.resume(returning: false)
            }
        }
    }

    /// A subscriber sent something or went away: wake the producer.
    func roomAvailable() {
        let waiters = state.withLock { state -> [CheckedContinuation<Bool, Never>] in
            defer { state.waiters.removeAll() }
            return Array(state.waiters.values)
        }
        for waiter in waiters { waiter.resume(returning: true) }
    }

    func add(_ subscriber: any NotifySubscriber) {
        state.withLock { $0.subscribers[subscriber.id] = subscriber }
    }

    func remove(subscriber id: Int) {
        let removed = state.withLock { state -> (any NotifySubscriber)? in
            guard let subscriber = state.subscribers.removeValue(forKey: id) else { return nil }
            let counters = subscriber.counters
            state.retired.notifications += counters.notifications
            state.retired.indications += counters.indications
            state.retired.truncated += counters.truncated
            return subscriber
        }
        removed?.close()
        roomAvailable()
    }

    func subscriber(_ id: Int) -> (any NotifySubscriber)? { state.withLock { $0.subscribers[id] } }

    var subscribers: [any NotifySubscriber] { state.withLock { Array($0.subscribers.values) } }

    func confirmAll() {
        for subscriber in subscribers { subscriber.confirmed() }
    }

    func closeAll() {
        for subscriber in subscribers { remove(subscriber: subscriber.id) }
    }

    /// Totals for metrics and the status topic.
    struct Snapshot: Sendable {
        var queueDepth = 0
        var drops = 0
        var notifications = 0
        var indications = 0
        var truncated = 0
        var subscribers = 0
    }

    var snapshot: Snapshot {
        state.withLock { state in
            var snapshot = Snapshot(drops: state.drops, notifications: state.retired.notifications,
                                    indications: state.retired.indications, truncated: state.retired.truncated,
                                    subscribers: state.subscribers.count)
            for subscriber in state.subscribers.values {
                let counters = subscriber.counters
                snapshot.queueDepth = max(snapshot.queueDepth, counters.queued)
                snapshot.notifications += counters.notifications
                snapshot.indications += counters.indications
                snapshot.truncated += counters.truncated
            }
            return snapshot
        }
    }
}
