import BluetoothCore
import BridgeCore
import Logging
import Synchronization

/// One local characteristic: its current value, its subscribers and the backpressure between them and MQTT.
///
/// `deliver` is called by the single MQTT consumer. Under `backpressure` it waits while any subscriber's queue is
/// full; since the consumer then stops taking messages, the MQTT client's inbound buffer fills, socket reads pause
/// and the broker holds (and slows) the publisher. The wait is bounded: a subscriber that holds it past the stall
/// limit is dropped by its own task, which makes room. Under the other policies it never waits, and every value a
/// policy discards is counted.
final class CharacteristicChannel: Sendable {
    let id: Int
    let name: String
    let configuration: PeripheralConfiguration.LocalCharacteristic
    let indicates: Bool
    private let state: Mutex<State>
    /// Wakes the MQTT consumer waiting for room (there is one consumer).
    private let room = WakeSignal()

    private struct State: Sendable {
        var value: [UInt8]
        var subscribers: [Int: NotifySubscriber] = [:]
        /// Counters of subscribers that have gone, so totals never go backwards.
        var retired = NotifySubscriber.Machine.Counters()
        /// Subscribers that were dropped for not keeping up.
        var dropped = 0
    }

    init(id: Int, name: String, configuration: PeripheralConfiguration.LocalCharacteristic) {
        self.id = id
        self.name = name
        self.configuration = configuration
        let flags = configuration.flags.impliedProperties
        indicates = flags.contains(.indicate) && !flags.contains(.notify)
        state = Mutex(State(value: configuration.initialValue ?? []))
    }

    var value: [UInt8] { state.withLock { $0.value } }

    /// Sets the value and queues it for every subscriber, without waiting. False when backpressure applies and
    /// some subscriber's queue is full: nothing was queued, and the caller must `deliver` (which waits).
    ///
    /// `sendingAtOnce` (only on the loop the MQTT client delivers on, see ``SourceFastPath``): an idle subscriber
    /// is sent the value right here instead of having it queued for its task.
    ///
    /// Synchronous on purpose: the common case costs no task switch on the MQTT consumer's hot path.
    func offerNow(_ value: [UInt8], sendingAtOnce: Bool = false) -> Bool {
        state.withLock { state -> Bool in
            state.value = value
            let subscribers = state.subscribers.values
            if configuration.whenFull == .backpressure, subscribers.contains(where: { !$0.hasRoom }) {
                // Nothing is offered (a subscriber may make room meanwhile; the value must go to each exactly once,
                // on the retry): each full one only learns that it holds the producer, which its stall rule times.
                for subscriber in subscribers where !subscriber.hasRoom { subscriber.producerWaited() }
                return false
            }
            for subscriber in subscribers {
                if sendingAtOnce { subscriber.offerOnLoop(value) } else { _ = subscriber.offer(value) }
            }
            return true
        }
    }

    /// Whether ``offerNow(_:sendingAtOnce:)`` would take a value now (no full queue holds it under backpressure).
    var hasRoomForProducer: Bool {
        guard configuration.whenFull == .backpressure else { return true }
        return state.withLock { state in state.subscribers.values.allSatisfy(\.hasRoom) }
    }

    /// Like ``offerNow(_:)``, but waits for room under backpressure (until the task is cancelled).
    func deliver(_ value: [UInt8]) async {
        while !offerNow(value) {
            if Task.isCancelled { return }
            await room.wait()
        }
    }

    /// A subscriber sent something or went away: wake the producer.
    func roomAvailable() { room.signal() }

    func add(_ subscriber: NotifySubscriber) {
        state.withLock { $0.subscribers[subscriber.id] = subscriber }
    }

    /// The subscriber's task ended: keep its counters in the totals.
    func retire(_ subscriber: NotifySubscriber) {
        let counters = subscriber.counters
        state.withLock { state in
            guard state.subscribers.removeValue(forKey: subscriber.id) != nil else { return }
            state.retired.notifications += counters.notifications
            state.retired.indications += counters.indications
            state.retired.truncated += counters.truncated
            state.retired.dropped += counters.dropped
            if subscriber.dropReason != nil { state.dropped += 1 }
        }
        room.signal()
    }

    func subscriber(_ id: Int) -> NotifySubscriber? { state.withLock { $0.subscribers[id] } }

    var subscribers: [NotifySubscriber] { state.withLock { Array($0.subscribers.values) } }

    func closeAll() {
        for subscriber in subscribers { subscriber.close() }
    }

    /// Totals for metrics and the status topic.
    struct Snapshot: Sendable {
        var queueDepth = 0
        var drops = 0
        var notifications = 0
        var indications = 0
        var truncated = 0
        var subscribers = 0
        var subscribersDropped = 0
    }

    var snapshot: Snapshot {
        state.withLock { state in
            var snapshot = Snapshot(
                drops: state.retired.dropped, notifications: state.retired.notifications,
                indications: state.retired.indications, truncated: state.retired.truncated,
                subscribers: state.subscribers.count, subscribersDropped: state.dropped)
            for subscriber in state.subscribers.values {
                let counters = subscriber.counters
                snapshot.queueDepth = max(snapshot.queueDepth, counters.queued)
                snapshot.notifications += counters.notifications
                snapshot.indications += counters.indications
                snapshot.truncated += counters.truncated
                snapshot.drops += counters.dropped
            }
            return snapshot
        }
    }
}
