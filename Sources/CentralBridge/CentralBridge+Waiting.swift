import BluetoothCore
import BridgeCore
import DequeModule
import Logging
import MQTTCore

extension CentralBridge {
    // MARK: - Discovery

    /// Whether something needs what discovery hears: configured devices (to find, track and reconnect them) or a
    /// `bridge/request/scan` in progress. A gateway that only serves its local peripheral does not scan: every
    /// advertisement around would cost a turn of the bridge, and a scanning adapter serves its own links worse.
    var discoveryNeeded: Bool { !configuration.devices.isEmpty || scans.count > 0 }

    /// Starts discovery with the configured filter when it is needed, bluetoothd is there and the adapter is
    /// powered.
    func ensureDiscovery() async {
        guard discoveryNeeded, bluetoothdPresent, !discovering, !shuttingDown else { return }
        guard let adapter = tree.adapters[adapterPath] else {
            logger.warning("bluez.adapter.missing", metadata: ["adapter": "\(configuration.bluetooth.adapter)"])
            return
        }
        guard adapter.powered else {
            logger.notice("bluez.adapter.off", metadata: ["adapter": "\(configuration.bluetooth.adapter)"])
            return
        }
        discovering = true
        let scan = configuration.bluetooth.scan
        let filter = BLEDiscoveryFilter(
            uuids: scan.uuids.map(\.description), rssi: scan.rssi.map { Int16(clamping: $0) },
            pathloss: scan.pathloss.map { UInt16(clamping: $0) }, transport: scan.transport.rawValue,
            duplicateData: scan.duplicates, pattern: scan.pattern)
        do {
            try await central.startDiscovery(adapter: adapterPath, filter: filter)
            logger.info("bluez.discovery.started")
        } catch let error as BlueZError where error.isInProgress {
            // Our session already runs (e.g. after a reconnect of ours, not of bluetoothd).
        } catch {
            discovering = false
            logger.warning("bluez.discovery.failed", metadata: ["error": "\(error)"])
        }
    }

    /// Stops the discovery this bridge started once nothing needs it any more (the last scan request answered on
    /// a gateway without devices, or a reload that removed them all).
    func stopDiscoveryIfUnneeded() async {
        guard discovering, !discoveryNeeded, bluetoothdPresent, !shuttingDown else { return }
        discovering = false
        do {
            try await central.stopDiscovery(adapter: adapterPath)
            logger.info("bluez.discovery.stopped")
        } catch {
            logger.warning("bluez.discovery.stop_failed", metadata: ["error": "\(error)"])
        }
    }

    // MARK: - Waiting for device state

    struct DeviceWaiter {
        let path: String
        let condition: @Sendable (BLEDeviceState?) -> Bool
        let signal: DeviceWaiterSignal
    }

    /// Waits until `condition` holds for the device at `path`, at most `timeout`.
    ///
    /// The timeout is a child task that ends with the wait, so a long one (a link waiting for its device to drop)
    /// leaves nothing behind; cancellation and shutdown end the wait at once.
    func waitForDevice(
        _ path: String, timeout: Duration?, until condition: @escaping @Sendable (BLEDeviceState?) -> Bool
    ) async throws {
        if condition(tree.devices[path]) { return }
        if shuttingDown { throw CancellationError() }
        nextWaiterID += 1
        let id = nextWaiterID
        let signal = DeviceWaiterSignal()
        waiters[id] = DeviceWaiter(path: path, condition: condition, signal: signal)
        defer { waiters[id] = nil }
        guard let timeout else {
            // No deadline (a link waiting for its device to drop): cancellation and shutdown end the wait.
            return try await signal.wait()
        }
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await signal.wait() }
            group.addTask {
                try await self.clock.sleep(for: timeout)
                throw CommandFailure.gattway("Timeout", "no answer within \(timeout)")
            }
            try await group.next()
            group.cancelAll()
        }
    }

    func checkWaiters(_ path: String) {
        let state = tree.devices[path]
        for waiter in waiters.values where waiter.path == path && waiter.condition(state) {
            waiter.signal.fire()
        }
    }

    // MARK: - Connect slots (BlueZ degrades under parallel connects)

    func acquireConnectSlot() async {
        if connectSlotsFree > 0 {
            connectSlotsFree -= 1
            return
        }
        await withCheckedContinuation { connectSlotWaiters.append($0) }
    }

    func releaseConnectSlot() {
        if let next = connectSlotWaiters.popFirst() { next.resume() } else { connectSlotsFree += 1 }
    }
}
