import BlueZ
import BluetoothCore
import DBus
import Logging

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// One command's conversation with bluetoothd: the system bus, the adapter it works on, and the steps every
/// command shares (finding a device, connecting to it when needed, finding a characteristic), each bounded by
/// `--timeout`.
struct BlueZTool {
    let bus: DBusConnection
    let bluez: BlueZClient
    let adapterName: String
    let adapterPath: String
    let timeout: Duration

    /// Connects to the system bus (DBUS_SYSTEM_BUS_ADDRESS when set) and checks that the adapter exists.
    static func open(_ options: BlueZToolOptions) async throws -> BlueZTool {
        let logger = Logger(label: "gattway.tool")
        let bus: DBusConnection
        do {
            bus = try await DBusConnection.connect(to: .system, name: "tool", logger: logger)
        } catch {
            throw ToolFailure("cannot connect to the system bus (is dbus running?): \(error)")
        }
        let tool = BlueZTool(
            bus: bus, bluez: BlueZClient(connection: bus, logger: logger), adapterName: options.adapter,
            adapterPath: "/org/bluez/\(options.adapter)", timeout: options.stepTimeout)
        do {
            let tree = try await tool.bluez.currentTree(timeout: tool.timeout)
            guard tree.adapters[tool.adapterPath] != nil else {
                let known = tree.adapters.keys.sorted().map { String($0.split(separator: "/").last ?? "") }
                throw ToolFailure(
                    "no adapter \(options.adapter) (BlueZ has \(known.isEmpty ? "none" : known.joined(separator: ", ")))"
                )
            }
        } catch {
            await bus.close()
            throw error
        }
        return tool
    }

    func close() async { await bus.close() }

    /// Runs `body` with a tool and closes it afterwards, also when `body` fails.
    static func with<Value>(
        _ options: BlueZToolOptions, _ body: (BlueZTool) async throws -> Value
    ) async throws -> Value {
        let tool = try await withBlueZErrors { try await open(options) }
        do {
            let value = try await withBlueZErrors { try await body(tool) }
            await tool.close()
            return value
        } catch {
            await tool.close()
            throw error
        }
    }

    // MARK: - Devices

    /// The device named by an address or by a name heard in a scan; when BlueZ does not know it yet, LE
    /// discovery runs until it is heard (at most `--timeout`), unless `discover` is false.
    func device(_ name: String, discover: Bool = true) async throws -> BlueZDeviceState {
        let address = BluetoothAddress(name)
        let adapterPath = self.adapterPath
        let matching: @Sendable (BlueZObjectTree) -> BlueZDeviceState? = { tree in
            let candidates = tree.devices.values.filter { $0.adapterPath == adapterPath }
            if let address { return candidates.first { $0.address == address } }
            return candidates.filter { $0.name == name || $0.alias == name }.min { $0.path < $1.path }
        }
        if let known = matching(try await bluez.currentTree(timeout: timeout)) { return known }
        guard discover else { throw ToolFailure("BlueZ knows no device \(name) on \(adapterName)") }
        try await bluez.setDiscoveryFilter(adapter: adapterPath, BlueZDiscoveryFilter(transport: "le"))
        try await bluez.startDiscovery(adapter: adapterPath)
        do {
            let found = try await bluez.waitForTree(
                what: "\(name) to be heard on \(adapterName)", timeout: timeout, matching)
            try? await bluez.stopDiscovery(adapter: adapterPath)
            return found
        } catch {
            try? await bluez.stopDiscovery(adapter: adapterPath)
            throw error
        }
    }

    /// Runs `body` while `device` is connected with its services resolved: connects first when it is not
    /// connected, and then disconnects afterwards (also when `body` fails); a link that was up stays up.
    func whileConnected<Value>(
        _ device: BlueZDeviceState, _ body: () async throws -> Value
    ) async throws -> Value {
        let connectedHere = !device.connected
        if connectedHere { try await bluez.connect(device: device.path, timeout: timeout) }
        do {
            let path = device.path
            try await bluez.waitForTree(what: "the services of \(device.displayName) to be resolved", timeout: timeout)
            {
                tree in
                guard let state = tree.devices[path] else { return nil as Void? }
                return state.connected && state.servicesResolved ? () : nil
            }
            let value = try await body()
            if connectedHere { try? await bluez.disconnect(device: device.path, timeout: timeout) }
            return value
        } catch {
            if connectedHere { try? await bluez.disconnect(device: device.path, timeout: timeout) }
            throw error
        }
    }

    // MARK: - GATT

    func gattHierarchy(of device: BlueZDeviceState) async throws -> BlueZGATTHierarchy {
        BlueZGATTHierarchy(managedObjects: try await bluez.managedObjects(timeout: timeout), devicePath: device.path)
    }

    /// The one characteristic of `device` that `name` designates.
    func characteristic(
        _ name: CharacteristicName, of device: BlueZDeviceState
    ) async throws -> BlueZGATTHierarchy.Characteristic {
        let found = try await gattHierarchy(of: device).characteristics(uuid: name.uuid, service: name.service)
        guard let first = found.first else {
            throw ToolFailure("\(device.displayName) has no characteristic \(name) (`gattway services` lists them)")
        }
        guard found.count == 1 else {
            throw ToolFailure(
                "\(device.displayName) has \(found.count) characteristics \(name.uuid.shortestForm): "
                    + "name one as SERVICE/CHARACTERISTIC")
        }
        return first
    }
}

extension BlueZDeviceState {
    /// The address, as users know the device.
    var displayName: String { address?.description ?? path }
}
