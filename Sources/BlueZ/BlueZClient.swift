package import DBus
package import Logging

/// A client of bluetoothd over one D-Bus connection: it watches BlueZ's object tree and performs operations.
///
/// It knows nothing of MQTT. The object tree itself is a value (`BlueZObjectTree`) that the consumer of `watch()`
/// keeps, so there is one owner of the state and no locking.
package final class BlueZClient: Sendable {
    package let connection: DBusConnection
    let logger: Logger

    package init(connection: DBusConnection, logger: Logger) {
        self.connection = connection
        self.logger = logger
    }

    /// What happens to BlueZ's objects, in order.
    package enum Event: Sendable {
        /// bluetoothd is (again) on the bus: the whole tree, from GetManagedObjects (`a{oa{sa{sv}}}`).
        case snapshot(DBusValue)
        /// bluetoothd left the bus: every object is gone.
        case serviceLost
        case interfacesAdded(path: String, interfaces: [String: [String: DBusValue]])
        case interfacesRemoved(path: String, interfaces: [String])
        case propertiesChanged(path: String, interface: String, changed: [String: DBusValue], invalidated: [String])
    }

    /// Watches bluetoothd: a snapshot first (when it is running), then every change, and a new snapshot whenever
    /// bluetoothd returns after leaving the bus. The stream ends when the task iterating it is cancelled.
    ///
    /// Buffering: signals are buffered by the D-Bus layer (newest 16,384 kept, drops counted there), so a consumer
    /// that stalls loses old changes rather than growing memory; `DBusConnection.droppedSignalCount` tells.
    package func watch() -> AsyncStream<Event> {
        watch { $0 }
    }

    /// `watch()` with each event transformed (or left out, for nil) in the watching task itself, so a consumer that
    /// wants another form of event needs no second task or buffer.
    package func watch<Output: Sendable>(
        _ transform: @escaping @Sendable (Event) -> Output?
    ) -> AsyncStream<Output> {
        let (stream, continuation) = AsyncStream.makeStream(of: Output.self, bufferingPolicy: .bufferingOldest(65_536))
        let task = Task { [connection, logger] in
            do {
                try await Self.runWatch(connection: connection, logger: logger) { event in
                    if let output = transform(event) { continuation.yield(output) }
                }
            } catch {
                logger.debug("bluez.watch.ended", metadata: ["error": "\(error)"])
            }
            continuation.finish()
        }
        continuation.onTermination = { _ in task.cancel() }
        return stream
    }

    private static func runWatch(
        connection: DBusConnection, logger: Logger, yield: @escaping @Sendable (Event) -> Void
    ) async throws {
        let buffering = DBusSignalBuffering.dropOldest(limit: 16_384)
        // Subscribe before asking for the snapshot so that nothing between the two is missed.
        let owners = try await connection.nameOwnerChanges(of: BlueZName.service)
        // One stream for every signal of bluetoothd keeps BlueZ's own order: GATT objects (InterfacesAdded) before
        // `ServicesResolved` (PropertiesChanged). Two streams consumed separately would interleave them.
        let bluezSignals = try await connection.signals(
            matching: DBusMatchRule(sender: BlueZName.service), buffering: buffering)
        if try await connection.nameHasOwner(BlueZName.service) {
            yield(.snapshot(try await managedObjects(connection)))
        } else {
            logger.info("bluez.absent")
            yield(.serviceLost)
        }
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask {
                for await change in owners {
                    if (change.newOwner ?? "").isEmpty {
                        yield(.serviceLost)
                    } else {
                        // A fresh bluetoothd: its tree replaces whatever was known.
                        let snapshot = try await Self.managedObjectsWithRetry(connection)
                        yield(.snapshot(snapshot))
                    }
                }
            }
            group.addTask {
                for await signal in bluezSignals {
                    if let event = Self.event(from: signal) { yield(event) }
                }
            }
            try await group.next()
            group.cancelAll()
        }
    }

    /// The object-tree event a bluetoothd signal carries, if any.
    static func event(from signal: DBusSignal) -> Event? {
        switch (signal.interface, signal.member) {
        case (BlueZName.properties, "PropertiesChanged"):
            guard signal.arguments.count == 3, let interface = signal.arguments[0].string,
                let changed = signal.arguments[1].stringKeyedDictionary
            else { return nil }
            return .propertiesChanged(
                path: signal.path, interface: interface, changed: changed,
                invalidated: signal.arguments[2].stringArray ?? [])
        case (BlueZName.objectManager, "InterfacesAdded"):
            guard signal.arguments.count == 2, let path = signal.arguments[0].objectPath,
                let interfaces = signal.arguments[1].stringKeyedDictionary
            else { return nil }
            return .interfacesAdded(path: path, interfaces: interfaces.mapValues { $0.stringKeyedDictionary ?? [:] })
        case (BlueZName.objectManager, "InterfacesRemoved"):
            guard signal.arguments.count == 2, let path = signal.arguments[0].objectPath,
                let names = signal.arguments[1].stringArray
            else { return nil }
            return .interfacesRemoved(path: path, interfaces: names)
        default:
            return nil
        }
    }

    static func managedObjects(_ connection: DBusConnection) async throws -> DBusValue {
        let reply = try await connection.call(
            destination: BlueZName.service, path: "/", interface: BlueZName.objectManager,
            method: "GetManagedObjects", timeout: .seconds(10))
        guard let tree = reply.first else {
            throw DBusError(name: DBusError.failed, message: "GetManagedObjects returned no value")
        }
        return tree
    }

    /// bluetoothd owns its name before it has exported everything; retry briefly when the first ask fails.
    static func managedObjectsWithRetry(_ connection: DBusConnection) async throws -> DBusValue {
        var delay = Duration.milliseconds(50)
        for _ in 0..<8 {
            do { return try await managedObjects(connection) } catch let error as DBusError {
                if error.name == DBusError.noReply { throw error }
                try await Task.sleep(for: delay)
                delay *= 2
            }
        }
        return try await managedObjects(connection)
    }
}
