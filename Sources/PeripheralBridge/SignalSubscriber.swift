import BlueZ
import Synchronization

/// bluetoothd's StartNotify session of one characteristic: each value becomes a PropertiesChanged(Value) signal,
/// which bluetoothd sends to every central whose CCC is enabled (bluez-dbus.md §6.5).
///
/// A drain task takes values from the bounded queue in order and emits them; for an indication it waits for the
/// Confirm() call (up to `confirmTimeout`) before the next one.
final class SignalSubscriber: NotifySubscriber {
    let id: Int
    var device: String? { nil }
    private let state: Mutex<State>
    private let wake: AsyncStream<Void>.Continuation
    private let onRoom: @Sendable () -> Void
    static let confirmTimeout: Duration = .seconds(30)

    private struct State: Sendable {
        var queue: NotifyQueue
        var closed = false
        var confirmation: CheckedContinuation<Void, Never>?
        /// Confirm() calls that arrived before the drain task started waiting for them.
        var earlyConfirmations = 0
        var counters = SubscriberCounters()
    }

    init(
        id: Int, characteristic: Int, export: GATTApplicationExport, indicate: Bool, capacity: Int,
        policy: NotifyQueue.Policy, onRoom: @escaping @Sendable () -> Void
    ) {
        self.id = id
        self.onRoom = onRoom
        state = Mutex(State(queue: NotifyQueue(capacity: capacity, policy: policy)))
        let (stream, wake) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
        self.wake = wake
        Task { [weak self] in
            for await _ in stream {
                while let self, let value = self.state.withLock({ $0.closed ? nil : $0.queue.first }) {
                    // bluetoothd caps values at 512 bytes and cuts each one to the central's MTU−3 itself (that cut,
                    // per central, is not seen here).
                    try? await export.emitValue(characteristic: characteristic, Array(value.prefix(512)))
                    if indicate { await self.waitForConfirmation() }
                    self.state.withLock { state in
                        if !state.queue.isEmpty { state.queue.removeFirst() }
                        if indicate { state.counters.indications += 1 } else { state.counters.notifications += 1 }
                        if value.count > 512 { state.counters.truncated += 1 }
                    }
                    self.onRoom()
                }
            }
        }
    }

    var hasRoom: Bool { state.withLock { $0.closed || $0.queue.hasRoom } }
    var isClosed: Bool { state.withLock { $0.closed } }
    var counters: SubscriberCounters {
        state.withLock { var c = $0.counters; c.queued = $0.queue.count; return c }
    }

    func offer(_ value: [UInt8]) -> NotifyQueue.Offer {
        let offer = state.withLock { $0.closed ? .queued : $0.queue.offer(value) }
        wake.yield()
        return offer
    }

    private func waitForConfirmation() async {
        let timeout = Task { [weak self] in
            try? await Task.sleep(for: Self.confirmTimeout)
            self?.confirmed()
        }
        await withCheckedContinuation { continuation in
            state.withLock { state in
                if state.earlyConfirmations > 0 || state.closed {
                    state.earlyConfirmations = max(0, state.earlyConfirmations - 1)
                    continuation.resume()
                } else {
                    state.confirmation = continuation
                }
            }
        }
        timeout.cancel()
    }

    func confirmed() {
        state.withLock { state in
            if let confirmation = state.confirmation {
                confirmation.resume()
                state.confirmation = nil
            } else {
                state.earlyConfirmations += 1
            }
        }
    }

    func close() {
        state.withLock { state in
            state.closed = true
            state.queue.removeAll()
            state.confirmation?.resume()
            state.confirmation = nil
        }
        wake.finish()
        onRoom()
    }
}
