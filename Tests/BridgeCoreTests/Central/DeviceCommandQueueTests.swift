import BridgeCore
import Testing

/// One GATT operation in flight per device, a bounded queue, a deadline per command.
@Suite struct DeviceCommandQueueTests {
    typealias Queue = DeviceCommandQueue<String, ContinuousClock.Instant>
    let t0 = ContinuousClock.now

    @Test func firstCommandStartsAtOnceTheNextWaitsItsTurn() {
        var queue = Queue(capacity: 2, commandTimeout: .seconds(10))
        guard case .start(let first) = queue.enqueue("a", at: t0) else {
            Issue.record("not started")
            return
        }
        #expect(first.command == "a" && first.deadline == t0 + .seconds(10))
        guard case .queued = queue.enqueue("b", at: t0 + .seconds(1)) else {
            Issue.record("not queued")
            return
        }
        let progress = queue.finished(at: t0 + .seconds(2))
        #expect(progress.start?.command == "b" && progress.expired.isEmpty)
        #expect(queue.finished(at: t0 + .seconds(3)).start == nil)
        #expect(queue.isIdle)
    }

    @Test func aFullQueueRefusesAtOnce() {
        var queue = Queue(capacity: 1, commandTimeout: .seconds(10))
        _ = queue.enqueue("a", at: t0)
        _ = queue.enqueue("b", at: t0)
        guard case .refuse(let command, let refusal) = queue.enqueue("c", at: t0) else {
            Issue.record("not refused")
            return
        }
        #expect(command == "c" && refusal == .busy(waiting: 1))
    }

    @Test func commandsThatWaitedPastTheirDeadlineExpireInsteadOfRunningLate() {
        var queue = Queue(capacity: 8, commandTimeout: .seconds(10))
        _ = queue.enqueue("hanging", at: t0)
        _ = queue.enqueue("b", at: t0 + .seconds(1))
        _ = queue.enqueue("c", at: t0 + .seconds(5))
        #expect(queue.nextDeadline == t0 + .seconds(11))
        #expect(queue.deadlinePassed(at: t0 + .seconds(11)).expired == ["b"])
        let progress = queue.finished(at: t0 + .seconds(16))
        #expect(progress.expired == ["c"] && progress.start == nil)
    }

    @Test func shutdownHandsBackWhatWaitsAndRefusesNewCommands() {
        var queue = Queue(capacity: 8, commandTimeout: .seconds(10))
        _ = queue.enqueue("a", at: t0)
        _ = queue.enqueue("b", at: t0)
        #expect(queue.shutdown() == ["b"])
        guard case .refuse(_, .stopping) = queue.enqueue("c", at: t0) else {
            Issue.record("not refused")
            return
        }
        #expect(queue.finished(at: t0).start == nil)
    }
}
