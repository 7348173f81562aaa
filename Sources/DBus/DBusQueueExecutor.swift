import Dispatch

/// Runs the jobs of one connection's actor on its own serial DispatchQueue.
///
/// libdbus's watches and timeouts are DispatchSources on the same queue, so the actor, the socket handling and
/// every libdbus callback share one thread of control and need no locks. `DispatchSerialQueue` does not exist in
/// corelibs-libdispatch on Linux, hence this small executor.
final class DBusQueueExecutor: SerialExecutor {
    let queue: DispatchQueue

    init(label: String) {
        queue = DispatchQueue(label: label)
    }

    /// Runs on a queue the caller already has, so that the connection shares one thread of control with another
    /// client on it (the MQTT client of the notification hot path, say).
    init(queue: DispatchQueue) {
        self.queue = queue
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let unownedJob = UnownedJob(job)
        let executor = asUnownedSerialExecutor()
        queue.async { unownedJob.runSynchronously(on: executor) }
    }

    /// Lets `assumeIsolated` succeed inside plain GCD blocks on the queue (and trap anywhere else).
    func checkIsolated() {
        dispatchPrecondition(condition: .onQueue(queue))
    }
}
