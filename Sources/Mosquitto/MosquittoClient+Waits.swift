import MQTTCore
import Polling

extension MosquittoClient {
    /// What a suspended caller waits for; resumed by the loop when it happens.
    enum WaitReason: Hashable {
        case publishSlot, writeDrained, allAcked, inbound, connected, stopped
        case suback(Int32)
        case unsuback(Int32)
    }

    struct PendingWait {
        let reason: WaitReason
        let continuation: CheckedContinuation<Void, any Error>
        /// The wait's timeout, cancelled when the wait ends otherwise: its handler holds the client.
        var timeout: LoopTimer?
    }

    /// Suspends until `reason` is resumed, the timeout passes (`MQTTError.timeout`), or the task is cancelled
    /// (`CancellationError`).
    func wait(for reason: WaitReason, operation: String, timeout: Duration?) async throws {
        let id = nextWaitID
        nextWaitID &+= 1
        let loop = loop
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let timer = timeout.map { timeout in
                    loop.schedule(after: timeout) { [self] in
                        self.loopIsolated {
                            $0.finishWait(id, with: .failure(MQTTError.timeout(operation: operation, after: timeout)))
                        }
                    }
                }
                waits.insert(PendingWait(reason: reason, continuation: continuation, timeout: timer), id: id)
            }
        } onCancel: {
            // Runs on the cancelling thread: hop to the loop. If cancellation came before the continuation was
            // stored, this block still runs after it, because the actor is busy on the loop until then.
            loop.execute { [self] in
                self.loopIsolated { $0.finishWait(id, with: .failure(CancellationError())) }
            }
        }
    }

    func finishWait(_ id: UInt64, with result: Result<Void, any Error>) {
        waits.remove(id)?.continuation.resume(with: result)
    }

    /// Resumes every caller waiting for `reason`.
    func resumeWaits(_ reason: WaitReason, with result: Result<Void, any Error> = .success(())) {
        for wait in waits.removeAll(for: reason) { wait.continuation.resume(with: result) }
    }

    func resumeWaits(where matches: (WaitReason) -> Bool, with result: Result<Void, any Error>) {
        for wait in waits.removeAll(where: matches) { wait.continuation.resume(with: result) }
    }

    func isWaiting(for reason: WaitReason) -> Bool { waits.contains(reason) }
}
