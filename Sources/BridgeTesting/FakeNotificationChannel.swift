import BluetoothCore
import Polling
import Synchronization

/// An AcquireNotify channel in memory: values are handed to the bridge's `onBatch` on the bridge's loop, and a
/// paused channel holds them until `resume()`, as a socket that is not read does.
package final class FakeNotificationChannel: BLENotificationChannel {
    private struct State {
        var closed = false
        var paused = false
        var held: [[UInt8]] = []
    }

    private let state = Mutex(State())
    private let loop: PollLoop
    private let onBatch: @Sendable ([[UInt8]]) -> Bool
    private let onClose: @Sendable (Bool) -> Void

    init(
        loop: PollLoop, onBatch: @escaping @Sendable ([[UInt8]]) -> Bool,
        onClose: @escaping @Sendable (Bool) -> Void
    ) {
        self.loop = loop
        self.onBatch = onBatch
        self.onClose = onClose
    }

    package var isClosed: Bool { state.withLock { $0.closed } }

    /// Sends `values` to the bridge; false when the channel is closed.
    func deliver(_ values: [[UInt8]]) -> Bool {
        guard !isClosed else { return false }
        loop.execute { [self] in
            let batch: [[UInt8]] = state.withLock { state in
                guard !state.closed else { return [] }
                state.held += values
                guard !state.paused else { return [] }
                defer { state.held = [] }
                return state.held
            }
            guard !batch.isEmpty else { return }
            if !onBatch(batch) { state.withLock { $0.paused = true } }
        }
        return true
    }

    package func resume() {
        state.withLock { $0.paused = false }
        _ = deliver([])
    }

    package func close() { close(byPeer: false) }

    func close(byPeer: Bool) {
        let wasOpen = state.withLock { state in
            defer { state.closed = true }
            return !state.closed
        }
        if wasOpen { loop.execute { [onClose] in onClose(byPeer) } }
    }
}
