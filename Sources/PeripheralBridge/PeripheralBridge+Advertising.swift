import BlueZ
import DBus
import Logging
import BridgeCore

/// Advertising, and the connected centrals that stop it at `max_connections`.
extension PeripheralBridge {
    /// Advertises while wanted, registered and below the configured maximum of connected centrals.
    func updateAdvertising() async {
        let centrals = handler.connectedCentrals.count
        let wanted = advertisingWanted && applicationRegistered && centrals < configuration.maxConnections
        if wanted && !advertisementRegistered {
            do {
                try await advertisement.register(adapterPath: adapterPath)
                advertisementRegistered = true
                logger.notice("peripheral.advertising", metadata: ["enabled": "true"])
            } catch {
                logger.warning("peripheral.advertise.failed", metadata: ["error": "\(error)"])
            }
        } else if !wanted && advertisementRegistered {
            advertisementRegistered = false
            try? await advertisement.unregister(adapterPath: adapterPath)
            logger.notice("peripheral.advertising", metadata: ["enabled": "false", "centrals": "\(centrals)"])
        }
        status.update(advertising: advertisementRegistered, registered: applicationRegistered, centrals: centrals)
    }

    func advertisementReleased() {
        advertisementRegistered = false
        status.markDirty()
    }

    /// The number of connected centrals is checked once a second (sessions open and close from bluetoothd's side).
    func watchCentrals() async {
        while !Task.isCancelled {
            try? await Task.sleep(for: .seconds(1))
            guard bluetoothdPresent else { continue }
            await forgetDisconnectedCentrals()
            await updateAdvertising()
        }
    }

    /// Asks bluetoothd whether each central that made a request is still connected; one that is not, or whose
    /// device object is gone (a central's LE address is usually temporary), no longer counts.
    private func forgetDisconnectedCentrals() async {
        for device in handler.requestingCentrals {
            do {
                let reply = try await bus.call(
                    destination: BlueZName.service, path: device, interface: BlueZName.properties, method: "Get",
                    arguments: [.string(BlueZName.device), .string("Connected")], timeout: .seconds(2))
                if reply.first?.bool == false { handler.forgetCentral(device) }
            } catch let error as DBusError where Self.objectGoneErrors.contains(error.name) {
                handler.forgetCentral(device)
            } catch {
                // No answer in time: keep counting it and ask again next time.
                logger.debug("peripheral.central.check_failed", metadata: ["device": "\(device)", "error": "\(error)"])
            }
        }
    }

    /// What bluetoothd answers for a device object that no longer exists.
    static let objectGoneErrors: Set<String> = [
        "org.freedesktop.DBus.Error.UnknownObject", "org.freedesktop.DBus.Error.UnknownInterface",
        "org.freedesktop.DBus.Error.UnknownMethod", "org.freedesktop.DBus.Error.InvalidArgs",
    ]
}
