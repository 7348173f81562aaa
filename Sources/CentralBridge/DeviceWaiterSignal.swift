import Synchronization

/// The one-shot signal a ``CentralBridge/waitForDevice(_:timeout:until:)`` call waits on.
///
/// Whoever comes first settles it: the bridge seeing the device reach the awaited state, shutdown failing every
/// waiter, or the waiting task being cancelled (its timeout fired, or the bridge is cancelled). Later settlements
/// are ignored, so a continuation is resumed exactly once and a cancelled wait never lingers.
final class DeviceWaiterSignal: Sendable {
    private enum State {
        case pending
        case waiting(CheckedContinuation<Void, any Error>)
        case settled(Result<Void, any Error>)
    }

    private let state = Mutex<State>(.pending)

    /// Waits until the signal is settled; throws `CancellationError` when the waiting task is cancelled first.
    func wait() async throws {
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let settled: Result<Void, any Error>? = state.withLock { state in
                    switch state {
                    case .pending:
                        state = .waiting(continuation)
                        return nil
                    case .settled(let result):
                        return result
                    case .waiting:
                        preconditionFailure("a device waiter signal is waited on once")
                    }
                }
                if let settled { continuation.resume(with: settled) }
            }
        } onCancel: {
            settle(.failure(CancellationError()))
        }
    }

    /// The awaited state was reached.
    func fire() { settle(.success(())) }

    /// The wait ends with `error`.
    func fail(_ error: any Error) { settle(.failure(error)) }

    private func settle(_ result: Result<Void, any Error>) {
        let continuation: CheckedContinuation<Void, any Error>? = state.withLock { state in
            switch state {
            case .pending:
                state = .settled(result)
                return nil
            case .waiting(let continuation):
                state = .settled(result)
                return continuation
            case .settled:
                return nil
            }
        }
        continuation?.resume(with: result)
    }
}
