import BridgeCore
import MQTTCore
import Testing

/// Each decision of a device's link, as a sequence of events and the actions they call for.
@Suite struct DeviceLinkStateMachineTests {
    typealias Link = DeviceLinkStateMachine<ContinuousClock.Instant>
    let t0 = ContinuousClock.now

    func link(_ policy: Link.Policy) -> Link {
        Link(
            policy: policy, backoff: JitteredBackoff(initial: .seconds(1), maximum: .seconds(4), jitter: 0),
            inProgressBackoff: JitteredBackoff(initial: .milliseconds(50), maximum: .milliseconds(800), jitter: 0),
            maxInProgressRetries: 2)
    }

    @Test func alwaysDeviceConnectsAndIsAvailableOnceSubscribed() {
        var link = link(.always)
        #expect(link.deviceTracked() == [.connect])
        #expect(link.connectSucceeded(at: t0) == [.publishAvailability(online: true)])
        #expect(link.state == .online)
    }

    @Test func failedConnectsBackOffExponentiallyUpToTheMaximumAndResetAfterSuccess() {
        var link = link(.always)
        _ = link.deviceTracked()
        #expect(
            link.connectFailed(.failed) == [.publishAvailability(online: false), .retryConnect(after: .seconds(1))])
        #expect(link.retryTimerFired() == [.connect])
        #expect(link.connectFailed(.failed) == [.retryConnect(after: .seconds(2))])
        #expect(link.retryTimerFired() == [.connect])
        #expect(link.connectFailed(.failed) == [.retryConnect(after: .seconds(4))])
        #expect(link.retryTimerFired() == [.connect])
        #expect(link.connectFailed(.failed) == [.retryConnect(after: .seconds(4))])
        #expect(link.retryTimerFired() == [.connect])
        #expect(link.connectSucceeded(at: t0) == [.publishAvailability(online: true)])
        #expect(link.linkLost() == [.publishAvailability(online: false), .retryConnect(after: .seconds(1))])
    }

    @Test func inProgressIsRetriedSoonABoundedNumberOfTimes() {
        var link = link(.always)
        _ = link.deviceTracked()
        #expect(link.connectFailed(.inProgress) == [.retryConnect(after: .milliseconds(50))])
        #expect(link.retryTimerFired() == [.connect])
        #expect(link.connectFailed(.inProgress) == [.retryConnect(after: .milliseconds(100))])
        #expect(link.retryTimerFired() == [.connect])
        // The third InProgress counts as a failed attempt: the long backoff and offline.
        #expect(
            link.connectFailed(.inProgress) == [.publishAvailability(online: false), .retryConnect(after: .seconds(1))])
    }

    @Test func everyLossSchedulesExactlyOneRetry() {
        var link = link(.always)
        _ = link.deviceTracked()
        _ = link.connectSucceeded(at: t0)
        for _ in 0..<30 {
            let actions = link.linkLost()
            #expect(actions.filter { if case .retryConnect = $0 { true } else { false } }.count == 1)
            #expect(link.linkLost() == [])  // a second report of the same loss starts nothing more
            #expect(link.retryTimerFired() == [.connect])
            _ = link.connectSucceeded(at: t0)
        }
    }

    @Test func onDemandDeviceConnectsForACommandAndDisconnectsWhenIdle() {
        var link = link(.onDemand(idle: .seconds(30)))
        #expect(link.deviceTracked() == [])
        #expect(link.connectRequested() == [.connect])
        #expect(
            link.connectSucceeded(at: t0) == [.publishAvailability(online: true), .startIdleTimer(after: .seconds(30))])
        link.commandFinished(at: t0 + .seconds(20))
        #expect(
            link.idleTimerFired(at: t0 + .seconds(30), commandRunning: false) == [.startIdleTimer(after: .seconds(20))])
        #expect(
            link.idleTimerFired(at: t0 + .seconds(50), commandRunning: true) == [.startIdleTimer(after: .seconds(30))])
        #expect(
            link.idleTimerFired(at: t0 + .seconds(50), commandRunning: false) == [.disconnect(reason: "idle_timeout")])
        #expect(link.linkLost() == [.publishAvailability(online: false)])
        #expect(link.state == .idle)
    }

    @Test func onDemandFailureIsNotRetried() {
        var link = link(.onDemand(idle: .seconds(30)))
        _ = link.connectRequested()
        #expect(link.connectFailed(.failed) == [.publishAvailability(online: false)])
        #expect(link.retryTimerFired() == [])
    }

    @Test func passiveDeviceIsAvailableWithoutConnecting() {
        var link = link(.never)
        #expect(link.deviceTracked() == [.publishAvailability(online: true)])
        #expect(link.connectRequested() == [.connect])
    }

    @Test func shutdownDisconnectsAnOnlineDeviceAndSaysOfflineOnce() {
        var link = link(.always)
        _ = link.deviceTracked()
        _ = link.connectSucceeded(at: t0)
        #expect(link.shutdown() == [.disconnect(reason: "stopping"), .publishAvailability(online: false)])
        #expect(link.retryTimerFired() == [])
        #expect(link.linkLost() == [])
        #expect(link.connectRequested() == [])
    }
}
