import BluetoothCore
import BridgeCore
import Logging

/// Advertising, and the connected centrals that stop it at `max_connections`.
extension PeripheralBridge {
    /// Advertises while wanted, registered and below the configured maximum of connected centrals.
    ///
    /// Calls overlap (a request, a central leaving, bluetoothd appearing each call it, and registering takes a round
    /// trip to bluetoothd): one call at a time changes the registration and looks again after each change, and a
    /// call that comes meanwhile waits for it. So the registration ends as the latest wish asks, whatever the order
    /// of the awaits: a stop asked for while the advertisement was being registered unregisters it.
    func updateAdvertising() async {
        if advertisingChange != nil {
            await withCheckedContinuation { advertisingChange?.append($0) }
            return
        }
        advertisingChange = []
        while let step = nextAdvertisingStep() {
            switch step {
            case .register:
                do {
                    try await server.registerAdvertisement(adapter: configuration.adapter)
                    advertisementRegistered = true
                    logger.notice("peripheral.advertising", metadata: ["enabled": "true"])
                } catch {
                    logger.warning("peripheral.advertise.failed", metadata: ["error": "\(error)"])
                }
            case .unregister:
                advertisementRegistered = false
                try? await server.unregisterAdvertisement(adapter: configuration.adapter)
                logger.notice(
                    "peripheral.advertising",
                    metadata: ["enabled": "false", "centrals": "\(handler.connectedCentrals.count)"])
            }
            // A failed registration is not retried here (the next change of wish or centrals tries again).
            if !advertisementRegistered && step == .register { break }
        }
        status.update(
            advertising: advertisementRegistered, registered: applicationRegistered,
            centrals: handler.connectedCentrals.count)
        let waiting = advertisingChange ?? []
        advertisingChange = nil
        for waiter in waiting { waiter.resume() }
    }

    private enum AdvertisingStep { case register, unregister }

    /// What the registration needs now to match what is wanted, or nil when it matches.
    private func nextAdvertisingStep() -> AdvertisingStep? {
        let wanted =
            advertisingWanted && applicationRegistered
            && handler.connectedCentrals.count < configuration.maxConnections
        if wanted && !advertisementRegistered { return .register }
        if !wanted && advertisementRegistered { return .unregister }
        return nil
    }

    func advertisementReleased() {
        advertisementRegistered = false
        status.markDirty()
    }
}
