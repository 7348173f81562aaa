package import BluetoothCore
package import DBus
import Glibc
package import Logging
import Polling

/// A ``GATTLocalApplication`` exported on the bus (with ObjectManager at its root) and registered with
/// `org.bluez.GattManager1.RegisterApplication`.
///
/// Paths: `<root>/serviceN`, `<root>/serviceN/charM`, `<root>/serviceN/charM/descK`. Calls from bluetoothd are
/// passed to the ``GATTServerHandler``; each runs in its own task, so a read waiting for something never blocks
/// the other calls. The handler's `BlueZError`s become the D-Bus error replies bluetoothd maps to ATT errors.
package final class GATTApplicationExport: Sendable {
    package let root: String
    package let application: GATTLocalApplication
    let connection: DBusConnection
    let handler: any GATTServerHandler
    let logger: Logger
    /// Object path of each characteristic, by id.
    package let characteristicPaths: [String]
    /// Each characteristic's path with its interface, checked once here for the notifications emitted per value.
    private let characteristicSources: [Result<DBusSignalOrigin, DBusError>]

    package init(
        application: GATTLocalApplication, handler: any GATTServerHandler, connection: DBusConnection,
        root: String = "/org/gattway/peripheral", logger: Logger
    ) {
        self.application = application
        self.handler = handler
        self.connection = connection
        self.root = root
        self.logger = logger
        var paths: [String] = []
        for (serviceIndex, service) in application.services.enumerated() {
            for index in service.characteristics.indices { paths.append("\(root)/service\(serviceIndex)/char\(index)") }
        }
        characteristicPaths = paths
        characteristicSources = paths.map { path in
            Result { () throws(DBusError) in
                try DBusSignalOrigin(path: path, interface: BlueZName.gattCharacteristic)
            }
        }
    }

    /// Exports every object. Call once, before the first ``register(adapterPath:)``.
    package func export() async throws {
        // Only bluetoothd may call what Gattway exports: any other local process is refused.
        try await connection.restrictExportedObjects(toOwnerOf: BlueZName.service)
        try await connection.addObjectManager(at: root)
        var id = 0
        for (serviceIndex, service) in application.services.enumerated() {
            let servicePath = "\(root)/service\(serviceIndex)"
            let characteristicPaths = service.characteristics.indices.map { "\(servicePath)/char\($0)" }
            // Exactly the properties doc/gatt-api.txt defines for a local GattService1; bluetoothd finds the
            // characteristics through the object manager, by their Service property.
            try await connection.export(
                path: servicePath,
                interfaces: [
                    DBusInterface(
                        name: BlueZName.gattService,
                        properties: [
                            DBusProperty(name: "UUID", signature: "s", source: .stored(.string(service.uuid))),
                            DBusProperty(name: "Primary", signature: "b", source: .stored(.bool(service.primary))),
                        ])
                ])
            for (index, characteristic) in service.characteristics.enumerated() {
                let path = characteristicPaths[index]
                try await exportCharacteristic(characteristic, id: id, path: path, servicePath: servicePath)
                for (descriptorIndex, descriptor) in characteristic.descriptors.enumerated() {
                    try await connection.export(
                        path: "\(path)/desc\(descriptorIndex)",
                        interfaces: [
                            Self.descriptorInterface(descriptor, characteristicPath: path)
                        ])
                }
                id += 1
            }
        }
    }

    private func exportCharacteristic(
        _ characteristic: GATTLocalApplication.Characteristic, id: Int, path: String, servicePath: String
    ) async throws {
        let handler = self.handler
        let loop = connection.loop
        var properties = [
            DBusProperty(name: "UUID", signature: "s", source: .stored(.string(characteristic.uuid))),
            DBusProperty(name: "Service", signature: "o", source: .stored(.objectPath(servicePath))),
            DBusProperty(name: "Flags", signature: "as", source: .stored(.stringArray(characteristic.flags))),
            DBusProperty(
                name: "Value", signature: "ay",
                source: .computed({ .bytes(handler.currentValue(characteristic: id)) })),
        ]
        var methods = [
            DBusMethod(
                name: "ReadValue", inputs: [.init("options", "a{sv}")], outputs: [.init("value", "ay")],
                handler: .async({ call in
                    try await Self.replyingWithDBusErrors {
                        [
                            .bytes(
                                try await handler.readValue(
                                    characteristic: id, options: GATTRequestOptions(call.arguments.first)))
                        ]
                    }
                })),
            DBusMethod(
                name: "WriteValue", inputs: [.init("value", "ay"), .init("options", "a{sv}")],
                handler: .async({ call in
                    guard let value = call.arguments.first?.bytes else {
                        throw DBusError(name: BlueZName.Error.invalidArguments, message: "WriteValue needs ay")
                    }
                    return try await Self.replyingWithDBusErrors {
                        try await handler.writeValue(
                            characteristic: id, value: value,
                            options: GATTRequestOptions(call.arguments.dropFirst().first))
                        return []
                    }
                })),
        ]
        if characteristic.canNotify {
            // Exposing NotifyAcquired makes bluetoothd prefer AcquireNotify (one socket per central, no bus hop
            // per value); it falls back to StartNotify when AcquireNotify fails with anything but Failed.
            properties.append(DBusProperty(name: "NotifyAcquired", signature: "b", source: .stored(.bool(false))))
            properties.append(DBusProperty(name: "Notifying", signature: "b", source: .stored(.bool(false))))
            methods += [
                DBusMethod(
                    name: "StartNotify",
                    handler: .async({ _ in
                        try await Self.replyingWithDBusErrors {
                            try await handler.startNotify(characteristic: id)
                            return []
                        }
                    })),
                DBusMethod(
                    name: "StopNotify",
                    handler: .async({ _ in
                        await handler.stopNotify(characteristic: id)
                        return []
                    })),
                DBusMethod(
                    name: "Confirm",
                    handler: .async({ _ in
                        await handler.confirm(characteristic: id)
                        return []
                    })),
                DBusMethod(
                    name: "AcquireNotify", inputs: [.init("options", "a{sv}")],
                    outputs: [.init("fd", "h"), .init("mtu", "q")],
                    handler: .async({ call in
                        try await Self.replyingWithDBusErrors {
                            try await Self.acquireNotify(
                                characteristic: id, options: GATTRequestOptions(call.arguments.first),
                                handler: handler, loop: loop)
                        }
                    })),
            ]
        }
        try await connection.export(
            path: path,
            interfaces: [
                DBusInterface(name: BlueZName.gattCharacteristic, methods: methods, properties: properties)
            ])
    }

    private static func descriptorInterface(
        _ descriptor: GATTLocalApplication.Descriptor, characteristicPath: String
    ) -> DBusInterface {
        let value = descriptor.value
        return DBusInterface(
            name: BlueZName.gattDescriptor,
            methods: [
                DBusMethod(
                    name: "ReadValue", inputs: [.init("options", "a{sv}")], outputs: [.init("value", "ay")],
                    handler: .sync({ call in
                        let offset = GATTRequestOptions(call.arguments.first).offset
                        guard offset <= value.count else {
                            throw DBusError(GATTServerError.invalidOffset(offset, value.count))
                        }
                        return [.bytes(Array(value[offset...]))]
                    })),
                DBusMethod(
                    name: "WriteValue", inputs: [.init("value", "ay"), .init("options", "a{sv}")],
                    handler: .sync({ _ in
                        throw DBusError(name: BlueZName.Error.notPermitted, message: "descriptor is constant")
                    })),
            ],
            properties: [
                DBusProperty(name: "UUID", signature: "s", source: .stored(.string(descriptor.uuid))),
                DBusProperty(name: "Characteristic", signature: "o", source: .stored(.objectPath(characteristicPath))),
                DBusProperty(name: "Flags", signature: "as", source: .stored(.stringArray(descriptor.flags))),
                DBusProperty(name: "Value", signature: "ay", source: .stored(.bytes(value))),
            ])
    }

    /// Creates the socket pair of an AcquireNotify: Gattway keeps one end (as the handler's link), bluetoothd
    /// gets the other with the central's MTU.
    private static func acquireNotify(
        characteristic: Int, options: GATTRequestOptions, handler: any GATTServerHandler, loop: PollLoop
    ) async throws -> [DBusValue] {
        let pair: SeqPacketSocketPair
        do {
            pair = try SeqPacketSocketPair()
        } catch {
            throw BlueZError(.failed, "\(error)")
        }
        let link = BlueZNotificationLink(fd: pair.local, mtu: options.mtu, device: options.device, loop: loop)
        do {
            try await handler.acquireNotify(characteristic: characteristic, options: options, link: link)
        } catch {
            link.close()
            _ = Glibc.close(pair.remote)
            throw error
        }
        // libdbus duplicates the descriptor into the reply; ours closes with the wrapper.
        return [.unixFD(DBusFileDescriptor(owning: pair.remote)), .uint16(UInt16(clamping: options.mtu))]
    }

    /// Runs a handler call, turning its `BlueZError` into the D-Bus error reply of the same name.
    static func replyingWithDBusErrors(_ body: () async throws -> [DBusValue]) async throws -> [DBusValue] {
        do {
            return try await body()
        } catch let error as BlueZError {
            throw DBusError(error)
        }
    }

    /// `GattManager1.RegisterApplication` on `adapterPath` (bluetoothd reads our objects before it replies).
    package func register(adapterPath: String, timeout: Duration = .seconds(30)) async throws {
        _ = try await connection.call(
            destination: BlueZName.service, path: adapterPath, interface: BlueZName.gattManager,
            method: "RegisterApplication", arguments: [.objectPath(root), .stringVariantDictionary([:])],
            timeout: timeout)
    }

    package func unregister(adapterPath: String) async throws {
        _ = try await connection.call(
            destination: BlueZName.service, path: adapterPath, interface: BlueZName.gattManager,
            method: "UnregisterApplication", arguments: [.objectPath(root)], timeout: .seconds(5))
    }

    /// Emits `PropertiesChanged(Value)`: how bluetoothd learns of a notification on the StartNotify way.
    package func emitValue(characteristic: Int, _ value: [UInt8]) async throws {
        try await connection.propertiesChanged(
            path: characteristicPaths[characteristic], interface: BlueZName.gattCharacteristic,
            changed: ["Value": .bytes(value)])
    }

    /// Emits `PropertiesChanged(Value)` from code running on the connection's loop, without suspending.
    ///
    /// - Precondition: called on the connection's loop.
    package func emitValueOnLoop(characteristic: Int, _ value: [UInt8]) throws {
        let source = try characteristicSources[characteristic].get()
        try connection.assumeIsolated { connection in
            try connection.emitByteArrayChange(from: source, property: "Value", value: value)
        }
    }

    /// Updates a stored characteristic property such as `Notifying` or `NotifyAcquired`.
    package func setCharacteristicProperty(characteristic: Int, name: String, value: DBusValue) async {
        do {
            try await connection.setProperty(
                path: characteristicPaths[characteristic], interface: BlueZName.gattCharacteristic, name: name,
                value: value)
        } catch {
            logger.debug("gatt.property.failed", metadata: ["property": "\(name)", "error": "\(error)"])
        }
    }
}

extension GATTRequestOptions {
    /// Parses the `a{sv}` bluetoothd sends; unknown keys are ignored, absent ones take BlueZ's defaults.
    package init(_ value: DBusValue?) {
        self.init()
        guard let dictionary = value?.stringKeyedDictionary else { return }
        device = dictionary["device"]?.variantValue.objectPath
        if let mtu = dictionary["mtu"]?.variantValue.uint16 { self.mtu = Int(mtu) }
        if let offset = dictionary["offset"]?.variantValue.uint16 { self.offset = Int(offset) }
        prepareAuthorize = dictionary["prepare-authorize"]?.variantValue.bool ?? false
    }
}

extension DBusError {
    /// The D-Bus error reply that carries a `BlueZError` back to bluetoothd.
    init(_ error: BlueZError) {
        self.init(name: error.name.rawValue, message: error.message)
    }
}
