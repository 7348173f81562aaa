import BluetoothCore
import BridgeCore
import Logging

/// Advertising, and the connected centrals that stop it at `max_connections`.
extension PeripheralBridge {
    /// Advertises while wanted, registered and below the configured maximum of connected centrals.
    func updateAdvertising() async {
        let centrals = handler.connectedCentrals.count
        let wanted = advertisingWanted && applicationRegistered && centrals < configuration.maxConnections
        if wanted && !advertisementRegistered {
            do {
                try await server.registerAdvertisement(adapter: configuration.adapter)
                advertisementRegistered = true
                logger.notice("peripheral.advertising", metadata: ["enabled": "true"])
            } catch {
                logger.warning("peripheral.advertise.failed", metadata: ["error": "\(error)"])
            }
        } else if !wanted && advertisementRegistered {
            advertisementRegistered = false
            try? await server.unregisterAdvertisement(adapter: configuration.adapter)
            logger.notice("peripheral.advertising", metadata: ["enabled": "false", "centrals": "\(centrals)"])
        }
        status.update(advertising: advertisementRegistered, registered: applicationRegistered, centrals: centrals)
    }

    func advertisementReleased() {
        advertisementRegistered = false
        status.markDirty()
    }
}
