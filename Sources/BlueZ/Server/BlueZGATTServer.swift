package import BluetoothCore
package import DBus
package import Logging
package import Polling
import Synchronization

/// The local peripheral's side of BlueZ: a GATT application and an advertisement exported on the bus and
/// registered with bluetoothd, and the signals that say when bluetoothd or a central comes and goes.
package final class BlueZGATTServer: GATTServer {
    let connection: DBusConnection
    let logger: Logger
    private let exports = Mutex<(application: GATTApplicationExport, advertisement: LEAdvertisementExport)?>(nil)
    /// Where `Release()` of the advertisement is reported (the current `watch`).
    private let releaseSink = Mutex<(@Sendable (GATTServerEvent) -> Void)?>(nil)

    package init(connection: DBusConnection, logger: Logger) {
        self.connection = connection
        self.logger = logger
    }

    package func export(
        application: GATTLocalApplication, advertisement: GATTAdvertisement, handler: any GATTServerHandler
    ) async throws {
        try await mappingDBusErrors {
            let applicationExport = GATTApplicationExport(
                application: application, handler: handler, connection: connection, logger: logger)
            let advertisementExport = LEAdvertisementExport(
                content: advertisement, connection: connection, logger: logger,
                onRelease: { [weak self] in self?.releaseSink.withLock { $0 }?(.advertisementReleased) })
            try await applicationExport.export()
            try await advertisementExport.export()
            exports.withLock { $0 = (applicationExport, advertisementExport) }
        }
    }

    private func exported() throws -> (application: GATTApplicationExport, advertisement: LEAdvertisementExport) {
        guard let exports = exports.withLock({ $0 }) else {
            throw BlueZError(.notReady, "the GATT application is not exported yet")
        }
        return exports
    }

    package func registerApplication(adapter: String) async throws {
        let application = try exported().application
        try await mappingDBusErrors { try await application.register(adapterPath: Self.adapterPath(adapter)) }
    }

    package func unregisterApplication(adapter: String) async throws {
        let application = try exported().application
        try await mappingDBusErrors { try await application.unregister(adapterPath: Self.adapterPath(adapter)) }
    }

    package func registerAdvertisement(adapter: String) async throws {
        let advertisement = try exported().advertisement
        try await mappingDBusErrors { try await advertisement.register(adapterPath: Self.adapterPath(adapter)) }
    }

    package func unregisterAdvertisement(adapter: String) async throws {
        let advertisement = try exported().advertisement
        try await mappingDBusErrors { try await advertisement.unregister(adapterPath: Self.adapterPath(adapter)) }
    }

    package func emitValue(characteristic: Int, _ value: [UInt8]) async throws {
        let application = try exported().application
        try await mappingDBusErrors { try await application.emitValue(characteristic: characteristic, value) }
    }

    /// The bus connection's loop: PropertiesChanged is sent there without a hop when the caller already runs on it.
    package var emitLoop: PollLoop? { connection.loop }

    package func emitValueOnLoop(characteristic: Int, _ value: [UInt8]) throws {
        let application = try exported().application
        do {
            try application.emitValueOnLoop(characteristic: characteristic, value)
        } catch let error as DBusError {
            throw BlueZError(BlueZErrorName(rawValue: error.name), error.message)
        }
    }

    package func setNotifying(characteristic: Int, _ notifying: Bool) async {
        guard let application = exports.withLock({ $0 })?.application else { return }
        await application.setCharacteristicProperty(
            characteristic: characteristic, name: "Notifying", value: .bool(notifying))
    }

    /// bluetoothd's name owner changes, and the Device1 signals of centrals leaving: `Connected` turning false
    /// (PropertiesChanged) or the device object going away (InterfacesRemoved, as a central's temporary LE address
    /// usually does).
    package func watch(_ onEvent: @escaping @Sendable (GATTServerEvent) -> Void) async throws {
        releaseSink.withLock { $0 = onEvent }
        defer { releaseSink.withLock { $0 = nil } }
        try await mappingDBusErrors {
            let owners = try await connection.nameOwnerChanges(of: BlueZName.service)
            // Devices change properties all the time (RSSI, advertising data): only `Connected` turning false
            // matters here, so each change is looked at in place on the bus's loop and left to the other
            // listeners, instead of being decoded and handed to a task of its own.
            let disconnections = try await connection.tapMessages(
                matching: DBusMatchRule(
                    sender: BlueZName.service, interface: BlueZName.properties, member: "PropertiesChanged",
                    arg0: BlueZName.device)
            ) { message in
                if message.changedBoolean(ofInterface: BlueZName.device, property: "Connected") == false {
                    onEvent(.centralDisconnected(device: message.path))
                }
                return false
            }
            let removals = try await connection.signals(
                matching: DBusMatchRule(
                    sender: BlueZName.service, interface: BlueZName.objectManager, member: "InterfacesRemoved"))
            onEvent(try await connection.nameHasOwner(BlueZName.service) ? .stackAppeared : .stackGone)
            await withTaskGroup(of: Void.self) { group in
                group.addTask {
                    for await change in owners { onEvent(change.newOwner == nil ? .stackGone : .stackAppeared) }
                }
                group.addTask {
                    for await signal in removals {
                        if let device = Self.removedDevice(interfacesRemoved: signal) {
                            onEvent(.centralDisconnected(device: device))
                        }
                    }
                }
            }
            await connection.removeTap(disconnections)
        }
    }

    /// The device of an `InterfacesRemoved(path, [..., Device1, ...])`.
    static func removedDevice(interfacesRemoved signal: DBusSignal) -> String? {
        guard signal.arguments.count == 2, let path = signal.arguments[0].objectPath,
            signal.arguments[1].stringArray?.contains(BlueZName.device) == true
        else { return nil }
        return path
    }

    static func adapterPath(_ adapter: String) -> String { "/org/bluez/" + adapter }

    /// The port speaks `BlueZError`: a D-Bus error reply keeps its name and message.
    private func mappingDBusErrors<T>(_ body: () async throws -> T) async throws -> T {
        do {
            return try await body()
        } catch let error as DBusError {
            throw BlueZError(BlueZErrorName(rawValue: error.name), error.message)
        }
    }
}
