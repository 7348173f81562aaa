import BridgeCore
import Testing

@Suite struct NotifySubscriberStateMachineTests {
    typealias Machine = NotifySubscriberStateMachine
    let t0 = BridgeClock.Instant(offset: .zero)
    let limits = Machine.Limits(confirmTimeout: .seconds(30), stallLimit: .seconds(10))

    func at(_ seconds: Int) -> BridgeClock.Instant { t0.advanced(by: .seconds(seconds)) }

    @Test func sendsQueuedValuesInOrderAndWaitsWhenEmpty() {
        var machine = Machine(indicates: false, capacity: 4, policy: .backpressure, limits: limits)
        #expect(machine.nextAction(at: t0) == .wait(until: nil))
        _ = machine.valueOffered([1], at: t0)
        _ = machine.valueOffered([2], at: t0)
        #expect(machine.nextAction(at: t0) == .send([1]))
        // One value in flight at a time.
        #expect(machine.nextAction(at: t0) == .wait(until: at(10)))
        machine.valueSent(at: t0)
        #expect(machine.nextAction(at: t0) == .send([2]))
        machine.valueSent(at: t0)
        #expect(machine.nextAction(at: t0) == .wait(until: nil))
        #expect(machine.counters.notifications == 2)
    }

    @Test func anIdleNotifyingSubscriberCanSendAtOnceAndCountsTheValueAsSent() {
        var machine = Machine(indicates: false, capacity: 4, policy: .backpressure, limits: limits)
        #expect(machine.canSendAtOnce)
        machine.valueSendingAtOnce([1], at: t0)
        // In flight: the subscriber's task sends nothing meanwhile, and nothing else goes at once.
        #expect(!machine.canSendAtOnce)
        #expect(machine.nextAction(at: t0) == .wait(until: at(10)))
        machine.valueSent(at: t0)
        #expect(machine.canSendAtOnce)
        #expect(machine.nextAction(at: t0) == .wait(until: nil))
        #expect(machine.snapshot.notifications == 1)
        #expect(machine.snapshot.queued == 0)
    }

    @Test func aValueSentAtOnceIntoAFullLinkWaitsFirstInTheQueueAndLaterValuesQueueBehindIt() {
        var machine = Machine(indicates: false, capacity: 4, policy: .backpressure, limits: limits)
        machine.valueSendingAtOnce([1], at: t0)
        machine.linkReportedFull()
        #expect(!machine.canSendAtOnce)
        _ = machine.valueOffered([2], at: t0)
        machine.linkWritable()
        #expect(machine.nextAction(at: at(1)) == .send([1]))
        machine.valueSent(at: at(1))
        #expect(machine.nextAction(at: at(1)) == .send([2]))
        machine.valueSent(at: at(1))
        #expect(machine.canSendAtOnce)
    }

    @Test func nothingGoesAtOnceWhileValuesWaitForAnIndicatingOrClosedSubscriber() {
        var queued = Machine(indicates: false, capacity: 4, policy: .backpressure, limits: limits)
        _ = queued.valueOffered([1], at: t0)
        #expect(!queued.canSendAtOnce)
        let indicating = Machine(indicates: true, capacity: 4, policy: .backpressure, limits: limits)
        #expect(!indicating.canSendAtOnce)
        var closed = Machine(indicates: false, capacity: 4, policy: .backpressure, limits: limits)
        closed.linkClosed()
        #expect(!closed.canSendAtOnce)
    }

    /// A value offered while another is being sent is never the one a dropping policy loses: the one in flight
    /// is sent and counted as sent, the policy applies to what waits behind it.
    @Test(arguments: [NotifyQueue.Policy.latest, .dropOldest])
    func aValueOfferedWhileAnotherIsBeingSentIsSentNext(policy: NotifyQueue.Policy) {
        var machine = Machine(indicates: false, capacity: 1, policy: policy, limits: limits)
        _ = machine.valueOffered([1], at: t0)
        #expect(machine.nextAction(at: t0) == .send([1]))
        #expect(machine.valueOffered([2], at: t0) == .queued)
        #expect(machine.valueOffered([3], at: t0) == .dropped(1))
        machine.valueSent(at: t0)
        #expect(machine.nextAction(at: t0) == .send([3]))
        machine.valueSent(at: t0)
        #expect(machine.snapshot.notifications == 2)
        #expect(machine.snapshot.dropped == 1)
    }

    @Test func aFullLinkKeepsTheValueUntilItIsWritable() {
        var machine = Machine(indicates: false, capacity: 4, policy: .backpressure, limits: limits)
        _ = machine.valueOffered([1], at: t0)
        #expect(machine.nextAction(at: t0) == .send([1]))
        machine.linkReportedFull()
        #expect(machine.nextAction(at: t0) == .wait(until: at(10)))
        machine.linkWritable()
        #expect(machine.nextAction(at: at(1)) == .send([1]))
    }

    @Test func anIndicationHoldsTheQueueUntilConfirmed() {
        var machine = Machine(indicates: true, capacity: 4, policy: .backpressure, limits: limits)
        _ = machine.valueOffered([1], at: t0)
        _ = machine.valueOffered([2], at: t0)
        #expect(machine.nextAction(at: t0) == .send([1]))
        machine.valueSent(at: t0)
        #expect(machine.nextAction(at: at(1)) == .wait(until: at(10)))
        machine.confirmationReceived(at: at(2))
        #expect(machine.nextAction(at: at(2)) == .send([2]))
        #expect(machine.counters.indications == 1)
    }

    @Test func aConfirmationArrivingWhileTheIndicationIsSentIsNotLost() {
        var machine = Machine(indicates: true, capacity: 4, policy: .backpressure, limits: limits)
        _ = machine.valueOffered([1], at: t0)
        _ = machine.valueOffered([2], at: t0)
        #expect(machine.nextAction(at: t0) == .send([1]))
        machine.confirmationReceived(at: t0)
        machine.valueSent(at: t0)
        #expect(machine.nextAction(at: t0) == .send([2]))
    }

    @Test func anUnconfirmedIndicationWithNothingBehindItTimesOutAndTheNextValueGoes() {
        var machine = Machine(indicates: true, capacity: 4, policy: .backpressure, limits: limits)
        _ = machine.valueOffered([1], at: t0)
        #expect(machine.nextAction(at: t0) == .send([1]))
        machine.valueSent(at: t0)
        // Nothing waits behind it: only the confirm deadline runs.
        #expect(machine.nextAction(at: at(1)) == .wait(until: at(30)))
        #expect(machine.nextAction(at: at(30)) == .wait(until: nil))
        #expect(machine.counters.confirmTimeouts == 1)
        _ = machine.valueOffered([2], at: at(31))
        #expect(machine.nextAction(at: at(31)) == .send([2]))
    }

    @Test func aCentralThatNeverConfirmsWhileValuesWaitIsDroppedAsStalled() {
        var machine = Machine(indicates: true, capacity: 4, policy: .dropOldest, limits: limits)
        _ = machine.valueOffered([1], at: t0)
        #expect(machine.nextAction(at: t0) == .send([1]))
        machine.valueSent(at: t0)
        _ = machine.valueOffered([2], at: at(1))
        #expect(machine.nextAction(at: at(5)) == .wait(until: at(11)))
        #expect(machine.nextAction(at: at(11)) == .drop(.stalled))
        #expect(machine.isClosed)
        #expect(machine.hasRoom)
        #expect(machine.nextAction(at: at(12)) == .finish)
    }

    @Test func aLinkThatNeverDrainsIsDroppedAsStalled() {
        var machine = Machine(indicates: false, capacity: 4, policy: .latest, limits: limits)
        _ = machine.valueOffered([1], at: t0)
        #expect(machine.nextAction(at: t0) == .send([1]))
        machine.linkReportedFull()
        #expect(machine.nextAction(at: at(9)) == .wait(until: at(10)))
        #expect(machine.nextAction(at: at(10)) == .drop(.stalled))
    }

    @Test func aSlowButDrainingCentralIsKeptUnderADropPolicy() {
        var machine = Machine(indicates: false, capacity: 2, policy: .dropOldest, limits: limits)
        var now = t0
        for second in 0..<60 {
            now = at(second)
            _ = machine.valueOffered([UInt8(second)], at: now)
            // The link takes one value every 5 s, far slower than the one a second offered.
            if second % 5 == 0 { machine.linkWritable() }
            let action = machine.nextAction(at: now)
            #expect(action != .drop(.stalled))
            if case .send = action {
                if second % 5 == 0 { machine.valueSent(at: now) } else { machine.linkReportedFull() }
            }
        }
        #expect(machine.counters.dropped > 0)
        #expect(!machine.isClosed)
    }

    @Test func aSlowCentralHoldingBackpressureIsDroppedAfterTheStallLimit() {
        var machine = Machine(indicates: false, capacity: 2, policy: .backpressure, limits: limits)
        _ = machine.valueOffered([1], at: t0)
        _ = machine.valueOffered([2], at: t0)
        #expect(machine.valueOffered([3], at: t0) == .full)
        #expect(!machine.hasRoom)
        // It drains one value every 5 s and the producer refills at once: the queue never empties.
        for second in stride(from: 0, to: 10, by: 5) {
            #expect(machine.nextAction(at: at(second)) == .send(second == 0 ? [1] : [2]))
            machine.valueSent(at: at(second))
            #expect(machine.valueOffered([9], at: at(second)) == .queued)
        }
        #expect(machine.nextAction(at: at(10)) == .drop(.backpressureHeld))
    }

    @Test func aProducerWaitingForRoomIsTimedFromItsFirstWait() {
        var machine = Machine(indicates: false, capacity: 2, policy: .backpressure, limits: limits)
        _ = machine.valueOffered([1], at: t0)
        _ = machine.valueOffered([2], at: t0)
        machine.producerWaited(at: at(1))
        machine.producerWaited(at: at(3))
        // The queue itself is untouched: the value waits with the producer, not here.
        #expect(machine.queuedCount == 2)
        #expect(machine.nextAction(at: at(5)) == .send([1]))
        machine.valueSent(at: at(5))
        #expect(machine.nextDeadline == at(11))
        #expect(machine.nextAction(at: at(11)) == .drop(.backpressureHeld))
    }

    @Test func aBurstThatDrainsWithinTheStallLimitKeepsTheSubscriber() {
        var machine = Machine(indicates: false, capacity: 2, policy: .backpressure, limits: limits)
        _ = machine.valueOffered([1], at: t0)
        _ = machine.valueOffered([2], at: t0)
        #expect(machine.valueOffered([3], at: t0) == .full)
        for _ in 0..<2 {
            guard case .send = machine.nextAction(at: at(1)) else {
                Issue.record("expected a send")
                return
            }
            machine.valueSent(at: at(1))
        }
        #expect(machine.nextAction(at: at(1)) == .wait(until: nil))
        #expect(machine.nextAction(at: at(20)) == .wait(until: nil))
    }

    @Test func eachQueuePolicyCountsWhatItDiscards() {
        for (policy, expected) in [(NotifyQueue.Policy.dropOldest, 1), (.dropNewest, 1), (.latest, 2)] {
            var machine = Machine(indicates: false, capacity: 2, policy: policy, limits: limits)
            for value in 1...3 { _ = machine.valueOffered([UInt8(value)], at: t0) }
            #expect(machine.counters.dropped == expected, "\(policy)")
        }
    }

    @Test func aClosedSubscriberTakesNothingAndFinishes() {
        var machine = Machine(indicates: false, capacity: 1, policy: .backpressure, limits: limits)
        _ = machine.valueOffered([1], at: t0)
        machine.linkClosed()
        #expect(machine.valueOffered([2], at: t0) == .queued)
        #expect(machine.queuedCount == 0)
        #expect(machine.nextAction(at: t0) == .finish)
    }
}
