package import BluetoothCore
package import Polling
import Synchronization

extension FakeBLECentral {
    package func events() -> AsyncStream<BLECentralEvent> { eventStream }

    package func setValueSink(_ sink: @escaping @Sendable (String, [UInt8]) -> Bool) async throws {
        state.withLock { $0.valueSink = sink }
    }

    package func setAdvertSink(
        _ sink: @escaping @Sendable (String, [BLEDeviceProperty]) -> Bool
    ) async throws -> BLESinkTimer? {
        state.withLock { $0.advertSink = sink }
        // No thread of its own calls the sink (tests do): the bridge defers with its own timers, on its clock.
        return nil
    }

    package func paceAdverts(every interval: Duration?) async {
        state.withLock { $0.advertPacingRequests.append(interval) }
    }

    package func startDiscovery(adapter: String, filter: BLEDiscoveryFilter) async throws {
        operations.append(.startDiscovery)
    }

    package func stopDiscovery(adapter: String) async throws {
        operations.append(.stopDiscovery)
    }

    package func removeDevice(adapter: String, device: String) async throws {
        operations.append(.removeDevice(device))
        dropLinkIfConnected(device)
        state.withLock { _ = $0.peripherals.removeValue(forKey: device) }
        eventContinuation.yield(.interfacesRemoved(path: device, [.device]))
    }

    package func connect(device: String, timeout: Duration) async throws {
        operations.append(.connect(device))
        let (peripheral, behaviour) = state.withLock {
            ($0.peripherals[device], $0.connectBehaviour[device] ?? .succeed)
        }
        guard let peripheral else { throw BlueZError(.doesNotExist, "Does Not Exist") }
        switch behaviour {
        case .succeed:
            let alreadyConnected = state.withLock { !$0.connected.insert(device).inserted }
            if alreadyConnected { throw BlueZError(.alreadyConnected, "Already Connected") }
            eventContinuation.yield(.deviceChanged(path: device, [.connected(true)]))
            for object in peripheral.gattObjects {
                eventContinuation.yield(.interfacesAdded(path: object.path, object.interfaces))
            }
            eventContinuation.yield(.deviceChanged(path: device, [.servicesResolved(true)]))
        case .fail(let error):
            throw error
        case .hang:
            let id = state.withLock { state in
                state.nextHangID += 1
                return state.nextHangID
            }
            try await withTaskCancellationHandler {
                try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                    let cancelled = state.withLock { state in
                        guard !Task.isCancelled else { return true }
                        state.hungConnects[id] = continuation
                        return false
                    }
                    if cancelled { continuation.resume(throwing: CancellationError()) }
                }
            } onCancel: {
                if let hung = state.withLock({ $0.hungConnects.removeValue(forKey: id) }) {
                    operations.append(.connectCancelled(device))
                    hung.resume(throwing: CancellationError())
                }
            }
        }
    }

    package func disconnect(device: String, timeout: Duration) async throws {
        operations.append(.disconnect(device))
        dropLinkIfConnected(device)
    }

    package func readValue(characteristic: String, timeout: Duration) async throws -> [UInt8] {
        operations.append(.read(characteristic))
        try requireConnected(characteristic)
        let value = state.withLock { $0.readValues[characteristic] } ?? []
        // BlueZ updates Value after a read, which reaches its subscribers as a property change.
        if state.withLock({ $0.valueSink })?(characteristic, value) != true {
            eventContinuation.yield(.characteristicChanged(path: characteristic, [.value(value)]))
        }
        return value
    }

    package func writeValue(
        characteristic: String, _ value: [UInt8], withResponse: Bool, timeout: Duration
    ) async throws {
        operations.append(.write(characteristic, value, withResponse: withResponse))
        try requireConnected(characteristic)
    }

    package func startNotify(characteristic: String, timeout: Duration) async throws {
        operations.append(.startNotify(characteristic))
        try requireConnected(characteristic)
        state.withLock { _ = $0.startNotified.insert(characteristic) }
    }

    package func acquireNotify(
        characteristic: String, timeout: Duration, loop: PollLoop,
        onBatch: @escaping @Sendable ([[UInt8]]) -> Bool, onClose: @escaping @Sendable (Bool) -> Void
    ) async throws -> any BLENotificationChannel {
        operations.append(.acquireNotify(characteristic))
        try requireConnected(characteristic)
        let refused = state.withLock { $0.acquireRefused.contains(characteristic) }
        if refused { throw BlueZError(.notSupported, "Operation is not supported") }
        let channel = FakeNotificationChannel(loop: loop, onBatch: onBatch, onClose: onClose)
        state.withLock { $0.channels[characteristic] = channel }
        return channel
    }

    package func pair(
        device: String, passkey: UInt32?, timeout: Duration, prompt: @escaping @Sendable (String) -> Void
    ) async throws {
        operations.append(.pair(device))
        eventContinuation.yield(.deviceChanged(path: device, [.paired(true)]))
    }

    package func cancelPairing(device: String, timeout: Duration) async throws {
        operations.append(.cancelPairing(device))
    }

    private func dropLinkIfConnected(_ device: String) {
        guard let peripheral = state.withLock({ $0.peripherals[device] }) else { return }
        dropLink(peripheral)
    }

    private func requireConnected(_ characteristic: String) throws {
        let connected = state.withLock { state in
            state.connected.contains { characteristic.hasPrefix($0 + "/") }
        }
        if !connected { throw BlueZError(.notConnected, "Not Connected") }
    }
}
