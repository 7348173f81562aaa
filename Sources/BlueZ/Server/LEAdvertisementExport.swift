package import BluetoothCore
package import DBus
package import Logging

/// An `org.bluez.LEAdvertisement1` object Gattway exports and registers with `LEAdvertisingManager1`.
package final class LEAdvertisementExport: Sendable {
    package typealias Content = GATTAdvertisement

    package let path: String
    let content: Content
    let connection: DBusConnection
    let logger: Logger
    let onRelease: @Sendable () -> Void

    /// `onRelease` runs when bluetoothd drops the advertisement by itself (`Release()`).
    package init(
        content: Content, connection: DBusConnection, path: String = "/org/gattway/advertisement0", logger: Logger,
        onRelease: @escaping @Sendable () -> Void
    ) {
        self.content = content
        self.connection = connection
        self.path = path
        self.logger = logger
        self.onRelease = onRelease
    }

    package func export() async throws {
        // Only bluetoothd may call what Gattway exports: any other local process is refused.
        try await connection.restrictExportedObjects(toOwnerOf: BlueZName.service)
        var properties = [
            DBusProperty(name: "Type", signature: "s", source: .stored(.string("peripheral"))),
            DBusProperty(name: "Discoverable", signature: "b", source: .stored(.bool(content.discoverable))),
        ]
        if !content.serviceUUIDs.isEmpty {
            properties.append(
                DBusProperty(
                    name: "ServiceUUIDs", signature: "as",
                    source: .stored(.stringArray(content.serviceUUIDs))))
        }
        if let name = content.localName {
            properties.append(DBusProperty(name: "LocalName", signature: "s", source: .stored(.string(name))))
        }
        if let manufacturer = content.manufacturerData {
            properties.append(
                DBusProperty(
                    name: "ManufacturerData", signature: "a{qv}",
                    source: .stored(.uint16VariantDictionary([manufacturer.companyID: .bytes(manufacturer.data)]))))
        }
        if let service = content.serviceData {
            properties.append(
                DBusProperty(
                    name: "ServiceData", signature: "a{sv}",
                    source: .stored(.stringVariantDictionary([service.uuid: .bytes(service.data)]))))
        }
        if !content.includes.isEmpty {
            properties.append(
                DBusProperty(name: "Includes", signature: "as", source: .stored(.stringArray(content.includes))))
        }
        if let appearance = content.appearance {
            properties.append(DBusProperty(name: "Appearance", signature: "q", source: .stored(.uint16(appearance))))
        }
        let onRelease = self.onRelease
        let logger = self.logger
        try await connection.export(
            path: path,
            interfaces: [
                DBusInterface(
                    name: BlueZName.advertisement,
                    methods: [
                        DBusMethod(
                            name: "Release",
                            handler: .sync({ _ in
                                logger.notice("advertisement.released")
                                onRelease()
                                return []
                            }))
                    ],
                    properties: properties)
            ])
    }

    package func register(adapterPath: String) async throws {
        _ = try await connection.call(
            destination: BlueZName.service, path: adapterPath, interface: BlueZName.advertisingManager,
            method: "RegisterAdvertisement", arguments: [.objectPath(path), .stringVariantDictionary([:])],
            timeout: .seconds(10))
    }

    package func unregister(adapterPath: String) async throws {
        _ = try await connection.call(
            destination: BlueZName.service, path: adapterPath, interface: BlueZName.advertisingManager,
            method: "UnregisterAdvertisement", arguments: [.objectPath(path)], timeout: .seconds(5))
    }
}
