package import BluetoothCore
package import Polling
import Synchronization

/// The stack's side of the local peripheral in memory: it records registrations and StartNotify values, and lets a
/// test play bluetoothd: call the handler as a central would, open notification links, report events.
package final class FakeGATTServer: GATTServer {
    private struct State {
        var handler: (any GATTServerHandler)?
        var application: GATTLocalApplication?
        var applicationRegistered = false
        var advertisementRegistered = false
        var emitted: [Int: [[UInt8]]] = [:]
        /// For each emitted value, whether it was emitted on `emitLoop` (synchronously, from the loop's thread).
        var emittedOnLoop: [Int: [Bool]] = [:]
        var notifying: [Int: Bool] = [:]
        var onEvent: (@Sendable (GATTServerEvent) -> Void)?
        var watchEnd: CheckedContinuation<Void, Never>?
        /// While true, advertisement registrations wait in `heldRegistrations` until the test lets them through.
        var holdRegistrations = false
        var heldRegistrations: [CheckedContinuation<Void, Never>] = []
    }

    private let state = Mutex(State())
    private let waiters = ConditionWaiters()
    /// Whether the stack is there when the bridge starts watching.
    private let presentAtStart: Bool

    /// `emitLoop`: the loop `emitValueOnLoop` runs on (the loop of the peripheral's MQTT client, to test the
    /// synchronous way); nil for a server that only emits the awaitable way.
    package init(stackPresent: Bool = true, emitLoop: PollLoop? = nil) {
        presentAtStart = stackPresent
        self.emitLoop = emitLoop
    }

    package let emitLoop: PollLoop?

    package func export(
        application: GATTLocalApplication, advertisement: GATTAdvertisement, handler: any GATTServerHandler
    ) async throws {
        changing { state in
            state.application = application
            state.handler = handler
        }
    }

    package func registerApplication(adapter: String) async throws { changing { $0.applicationRegistered = true } }
    package func unregisterApplication(adapter: String) async throws { changing { $0.applicationRegistered = false } }
    package func registerAdvertisement(adapter: String) async throws {
        // As bluetoothd's answer takes a round trip, a held registration completes only when the test says so.
        await withCheckedContinuation { continuation in
            let held = state.withLock { state -> Bool in
                guard state.holdRegistrations else { return false }
                state.heldRegistrations.append(continuation)
                return true
            }
            if held { waiters.changed() } else { continuation.resume() }
        }
        changing { $0.advertisementRegistered = true }
    }
    package func unregisterAdvertisement(adapter: String) async throws {
        changing { $0.advertisementRegistered = false }
    }

    package func emitValue(characteristic: Int, _ value: [UInt8]) async throws {
        changing { state in
            state.emitted[characteristic, default: []].append(value)
            state.emittedOnLoop[characteristic, default: []].append(false)
        }
    }

    package func emitValueOnLoop(characteristic: Int, _ value: [UInt8]) throws {
        guard let emitLoop else { preconditionFailure("emitValueOnLoop on a server without an emit loop") }
        emitLoop.checkIsolated()
        changing { state in
            state.emitted[characteristic, default: []].append(value)
            state.emittedOnLoop[characteristic, default: []].append(true)
        }
    }

    package func setNotifying(characteristic: Int, _ notifying: Bool) async {
        changing { $0.notifying[characteristic] = notifying }
    }

    package func watch(_ onEvent: @escaping @Sendable (GATTServerEvent) -> Void) async throws {
        changing { $0.onEvent = onEvent }
        onEvent(presentAtStart ? .stackAppeared : .stackGone)
        await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let cancelled = state.withLock { state -> Bool in
                    if Task.isCancelled { return true }
                    state.watchEnd = continuation
                    return false
                }
                if cancelled { continuation.resume() }
            }
        } onCancel: {
            state.withLock { state -> CheckedContinuation<Void, Never>? in
                defer { state.watchEnd = nil }
                return state.watchEnd
            }?.resume()
        }
        changing { $0.onEvent = nil }
    }

    private func changing(_ change: (inout State) -> Void) {
        state.withLock { change(&$0) }
        waiters.changed()
    }

    // MARK: - Playing the stack

    /// From now on advertisement registrations wait (counted by `heldRegistrationCount`) until
    /// `releaseRegistrations()`.
    package func holdRegistrations() { state.withLock { $0.holdRegistrations = true } }

    /// Lets every held registration complete, and those to come pass at once.
    package func releaseRegistrations() {
        let held = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            state.holdRegistrations = false
            defer { state.heldRegistrations = [] }
            return state.heldRegistrations
        }
        for continuation in held { continuation.resume() }
    }

    package var heldRegistrationCount: Int { state.withLock { $0.heldRegistrations.count } }

    package var isApplicationRegistered: Bool { state.withLock { $0.applicationRegistered } }
    package var isAdvertising: Bool { state.withLock { $0.advertisementRegistered } }
    package func emitted(characteristic: Int) -> [[UInt8]] { state.withLock { $0.emitted[characteristic] ?? [] } }
    /// For each value of ``emitted(characteristic:)``, whether it went the synchronous way, on `emitLoop`.
    package func emittedOnLoop(characteristic: Int) -> [Bool] {
        state.withLock { $0.emittedOnLoop[characteristic] ?? [] }
    }
    package func isNotifying(characteristic: Int) -> Bool { state.withLock { $0.notifying[characteristic] ?? false } }

    /// The handler the bridge exported; fails when it has not exported yet.
    package var handler: any GATTServerHandler {
        get throws {
            guard let handler = state.withLock({ $0.handler }) else { throw ConditionTimeout(what: "export") }
            return handler
        }
    }

    /// Reports an event to the bridge's watch.
    package func report(_ event: GATTServerEvent) {
        state.withLock { $0.onEvent }?(event)
    }

    /// A central enables notifications the AcquireNotify way: returns the link the bridge now writes into.
    package func acquireNotify(
        characteristic: Int, device: String, mtu: Int = 23, capacity: Int = .max
    ) async throws -> FakeNotificationLink {
        let link = FakeNotificationLink(device: device, mtu: mtu, capacity: capacity, loop: emitLoop)
        try await handler.acquireNotify(
            characteristic: characteristic, options: GATTRequestOptions(device: device, mtu: mtu), link: link)
        return link
    }

    /// Waits until `condition` holds for this server.
    package func wait(
        for what: String, timeout: Duration = .seconds(30),
        until condition: @escaping @Sendable (FakeGATTServer) -> Bool
    ) async throws {
        guard await waiters.wait(timeout: timeout, until: { [unowned self] in condition(self) }) else {
            throw ConditionTimeout(what: what)
        }
    }
}
