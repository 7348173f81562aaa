import BluetoothCore
import BridgeCore
import Logging
import Metrics
import Synchronization

/// One receiver of a characteristic's values, run by its own child task in the bridge's task group: a central's
/// notification link (AcquireNotify), or the stack's StartNotify session (which fans each PropertiesChanged value out
/// to every subscribed central itself).
///
/// The MQTT consumer only offers values into the subscriber's bounded queue (``offer(_:)``, synchronous); the
/// subscriber's task sends them, waits for room or confirmations and keeps the deadlines of
/// ``NotifySubscriberStateMachine``. So a slow or silent central only ever waits in its own task.
final class NotifySubscriber: Sendable {
    typealias Machine = NotifySubscriberStateMachine

    enum Outlet: Sendable {
        case link(any GATTNotificationLink)
        /// The StartNotify session of a characteristic, through PropertiesChanged(Value).
        case startNotify(any GATTServer, characteristic: Int)
    }

    let id: Int
    let outlet: Outlet
    let characteristicName: String
    private let machine: Mutex<Machine>
    private let wake = WakeSignal()
    private let clock: BridgeClock
    private let logger: Logger
    /// Told when the subscriber made room (the producer may be waiting) and when it ended.
    private let onRoom: @Sendable () -> Void
    private let onEnd: @Sendable (NotifySubscriber) async -> Void

    init(
        id: Int, outlet: Outlet, characteristicName: String, machine: Machine, clock: BridgeClock, logger: Logger,
        onRoom: @escaping @Sendable () -> Void, onEnd: @escaping @Sendable (NotifySubscriber) async -> Void
    ) {
        self.id = id
        self.outlet = outlet
        self.characteristicName = characteristicName
        self.machine = Mutex(machine)
        self.clock = clock
        self.logger = logger
        self.onRoom = onRoom
        self.onEnd = onEnd
    }

    /// The central's object path for a link (nil for the StartNotify session).
    var device: String? {
        if case .link(let link) = outlet { link.device } else { nil }
    }

    var hasRoom: Bool { machine.withLock { $0.hasRoom } }
    var isClosed: Bool { machine.withLock { $0.isClosed } }
    var counters: Machine.Counters { machine.withLock { $0.snapshot } }
    /// Why the subscriber was dropped, if it was.
    var dropReason: Machine.DropReason? { machine.withLock { $0.dropReason } }

    func offer(_ value: [UInt8]) -> NotifyQueue.Offer {
        let now = clock.now
        let offer = machine.withLock { $0.valueOffered(value, at: now) }
        wake.signal()
        return offer
    }

    /// Offers `value` on the loop the values arrive on: an idle subscriber (nothing queued, in flight or awaiting a
    /// confirmation, its link with room) is sent it at once, with no wake of its task; otherwise it is queued for
    /// the task as ``offer(_:)`` does.
    func offerOnLoop(_ value: [UInt8]) {
        let now = clock.now
        let atOnce = machine.withLock { machine -> Bool in
            guard machine.canSendAtOnce else { return false }
            machine.valueSendingAtOnce(value, at: now)
            return true
        }
        if atOnce { sendAtOnce(value, at: now) } else { _ = offer(value) }
    }

    /// Sends the value ``offerOnLoop(_:)`` put in flight, and reports the outcome as the task does after a send.
    private func sendAtOnce(_ value: [UInt8], at now: BridgeClock.Instant) {
        switch outlet {
        case .link(let link):
            let cut = value.count > link.maximumValueLength
            let result = link.send(cut ? Array(value.prefix(link.maximumValueLength)) : value)
            machine.withLock { machine in
                switch result {
                case .sent: machine.valueSent(at: now, cut: cut)
                case .full: machine.linkReportedFull()
                case .closed: machine.linkClosed()
                }
            }
            // The task takes over: it times the stall of a full link, or ends with a closed one.
            if result != .sent { wake.signal() }
        case .startNotify(let server, let characteristic):
            let cut = value.count > 512
            do {
                try server.emitValueOnLoop(characteristic: characteristic, cut ? Array(value.prefix(512)) : value)
            } catch {
                logger.debug(
                    "peripheral.notify.emit_failed",
                    metadata: ["characteristic": "\(characteristicName)", "error": "\(error)"])
            }
            machine.withLock { $0.valueSent(at: now, cut: cut) }
        }
    }

    /// The producer waits for this subscriber's room (it offered nothing).
    func producerWaited() {
        let now = clock.now
        machine.withLock { $0.producerWaited(at: now) }
        wake.signal()
    }

    /// The remote confirmed an indication (a Confirm() call, or 0x01 on the link).
    func confirmed() {
        let now = clock.now
        machine.withLock { $0.confirmationReceived(at: now) }
        wake.signal()
    }

    /// Ends the subscriber (the stack stopped the session, or went away): its task finishes.
    func close() {
        machine.withLock { $0.linkClosed() }
        wake.signal()
    }

    /// The subscriber's task: sends, waits, enforces the deadlines, until the subscriber closes or is dropped.
    func run() async {
        if case .link(let link) = outlet {
            // Held strongly until `end()` closes the link: a weak reference would put every retain and release of
            // the subscriber, a few per value, on the runtime's slow path.
            link.start { [self] event in self.linkEvent(event) }
        }
        await drive()
        await end()
    }

    private func drive() async {
        while !Task.isCancelled {
            let now = clock.now
            switch machine.withLock({ $0.nextAction(at: now) }) {
            case .send(let value):
                await send(value)
            case .wait(let deadline):
                await waitForEvent(until: deadline)
            case .drop(let reason):
                Counter(label: "gattway.peripheral.subscribers_dropped", dimensions: [("reason", reason.rawValue)])
                    .increment()
                logger.warning(
                    "peripheral.subscriber.dropped",
                    metadata: [
                        "characteristic": "\(characteristicName)", "device": "\(device ?? "-")",
                        "reason": "\(reason.rawValue)",
                    ])
                return
            case .finish:
                return
            }
        }
    }

    private func send(_ value: [UInt8]) async {
        switch outlet {
        case .link(let link):
            let cut = value.count > link.maximumValueLength
            let result = link.send(cut ? Array(value.prefix(link.maximumValueLength)) : value)
            let now = clock.now
            machine.withLock { machine in
                switch result {
                case .sent: machine.valueSent(at: now, cut: cut)
                case .full: machine.linkReportedFull()
                case .closed: machine.linkClosed()
                }
            }
            if result == .sent { onRoom() }
        case .startNotify(let server, let characteristic):
            // bluetoothd caps values at 512 bytes and cuts each one to the central's MTU−3 itself (that cut, per
            // central, is not seen here).
            let cut = value.count > 512
            do {
                try await server.emitValue(characteristic: characteristic, cut ? Array(value.prefix(512)) : value)
            } catch {
                logger.debug(
                    "peripheral.notify.emit_failed",
                    metadata: [
                        "characteristic": "\(characteristicName)", "error": "\(error)",
                    ])
            }
            let now = clock.now
            machine.withLock { $0.valueSent(at: now, cut: cut) }
            onRoom()
        }
    }

    private func linkEvent(_ event: GATTNotificationLinkEvent) {
        switch event {
        case .writable: machine.withLock { $0.linkWritable() }
        case .confirmed:
            let now = clock.now
            machine.withLock { $0.confirmationReceived(at: now) }
        case .closed:
            logger.info("peripheral.notify.released", metadata: ["characteristic": "\(characteristicName)"])
            machine.withLock { $0.linkClosed() }
        }
        wake.signal()
    }

    /// Waits for the next event, or for `deadline` on the bridge's clock, whichever comes first.
    private func waitForEvent(until deadline: BridgeClock.Instant?) async {
        guard let deadline else { return await wake.wait() }
        let clock = self.clock
        let wake = self.wake
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await wake.wait() }
            group.addTask { try? await clock.sleep(until: deadline) }
            await group.next()
            group.cancelAll()
        }
    }

    /// Counted out of the channel before the link closes, so whoever sees the link closed sees the totals too.
    private func end() async {
        machine.withLock { $0.linkClosed() }
        await onEnd(self)
        if case .link(let link) = outlet { link.close() }
        onRoom()
    }
}
