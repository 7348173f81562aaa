package import BluetoothCore
package import Polling
import Synchronization

/// A central's notification link in memory: it holds up to `capacity` values the central has not taken yet (then
/// `send` answers `.full`), and the test drains it, confirms indications or closes it as the stack would.
package final class FakeNotificationLink: GATTNotificationLink {
    package let device: String?
    package let maximumValueLength: Int
    private let waiters = ConditionWaiters()

    private struct State {
        var handler: (@Sendable (GATTNotificationLinkEvent) -> Void)?
        var inFlight: [[UInt8]] = []
        var delivered: [[UInt8]] = []
        var sentOnLoop: [Bool] = []
        var capacity: Int
        var reportedFull = false
        var closed = false
    }

    private let state: Mutex<State>

    /// The loop the peripheral may send from synchronously (``sentOnLoop`` tells which values it did).
    private let loop: PollLoop?

    package init(device: String?, mtu: Int = 23, capacity: Int = .max, loop: PollLoop? = nil) {
        self.device = device
        self.loop = loop
        maximumValueLength = max(1, min(mtu - 3, 512))
        state = Mutex(State(capacity: capacity))
    }

    package func start(_ handler: @escaping @Sendable (GATTNotificationLinkEvent) -> Void) {
        state.withLock { $0.handler = handler }
        waiters.changed()
    }

    package func send(_ value: [UInt8]) -> GATTLinkSendResult {
        let onLoop = loop?.inLoop ?? false
        let result = state.withLock { state -> GATTLinkSendResult in
            if state.closed { return .closed }
            guard state.inFlight.count < state.capacity else {
                state.reportedFull = true
                return .full
            }
            state.inFlight.append(value)
            state.sentOnLoop.append(onLoop)
            return .sent
        }
        waiters.changed()
        return result
    }

    package func close() {
        state.withLock { $0.closed = true }
        waiters.changed()
    }

    package var isClosed: Bool { state.withLock { $0.closed } }
    package var isStarted: Bool { state.withLock { $0.handler != nil } }
    /// Values sent into the link and not yet taken by the central.
    package var pending: [[UInt8]] { state.withLock { $0.inFlight } }
    /// For each value sent into the link, in order, whether it was sent on the loop (synchronously, as the MQTT
    /// message arrived) rather than by the subscriber's task.
    package var sentOnLoop: [Bool] { state.withLock { $0.sentOnLoop } }
    /// Values the central took (``drain(_:)``), in order.
    package var delivered: [[UInt8]] { state.withLock { $0.delivered } }

    /// The central takes up to `count` values; the link tells the subscriber it is writable if it had been full.
    package func drain(_ count: Int = .max) {
        let handler = state.withLock { state -> (@Sendable (GATTNotificationLinkEvent) -> Void)? in
            let taken = state.inFlight.prefix(count)
            state.delivered += taken
            state.inFlight.removeFirst(taken.count)
            guard state.reportedFull, !taken.isEmpty else { return nil }
            state.reportedFull = false
            return state.handler
        }
        handler?(.writable)
        waiters.changed()
    }

    /// From now on the central takes every value at once (it has caught up).
    package func keepUp() {
        state.withLock { $0.capacity = .max }
        drain()
    }

    /// The central confirms an indication.
    package func confirm() {
        state.withLock { $0.handler }?(.confirmed)
    }

    /// The stack closes the link (CCC disabled, or the central left).
    package func closeByStack() {
        let handler = state.withLock { state -> (@Sendable (GATTNotificationLinkEvent) -> Void)? in
            guard !state.closed else { return nil }
            state.closed = true
            return state.handler
        }
        handler?(.closed)
        waiters.changed()
    }

    /// Waits until `condition` holds for this link.
    package func wait(
        for what: String, timeout: Duration = .seconds(30),
        until condition: @escaping @Sendable (FakeNotificationLink) -> Bool
    ) async throws {
        guard await waiters.wait(timeout: timeout, until: { [unowned self] in condition(self) }) else {
            throw ConditionTimeout(what: what)
        }
    }
}
