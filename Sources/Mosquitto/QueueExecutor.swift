import Dispatch

/// A serial executor backed by one DispatchQueue.
///
/// libmosquitto is not thread-safe in unthreaded mode, so every call into it happens on this queue: the actor's
/// methods run here, and so do the DispatchSources that watch the broker socket. C callbacks therefore arrive on
/// the queue too and re-enter the actor with `assumeIsolated` (which `checkIsolated` below makes possible; Linux
/// has no `DispatchSerialQueue` to do it for us).
final class QueueExecutor: SerialExecutor {
    let queue: DispatchQueue

    init(label: String) { queue = DispatchQueue(label: label) }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        let executor = asUnownedSerialExecutor()
        queue.async { job.runSynchronously(on: executor) }
    }

    func checkIsolated() { dispatchPrecondition(condition: .onQueue(queue)) }
}
