import BluetoothCore
package import DBus

/// A wait on BlueZ that reached its deadline; the message says what was awaited.
package struct BlueZWaitTimeout: Error, Sendable, CustomStringConvertible {
    package let what: String
    package let timeout: Duration

    package var description: String { "timed out after \(timeout.formattedSeconds) waiting for \(what)" }
}

extension Duration {
    /// `2.5 s`, `10 s`.
    package var formattedSeconds: String {
        let milliseconds = components.seconds * 1000 + components.attoseconds / 1_000_000_000_000_000
        if milliseconds % 1000 == 0 { return "\(milliseconds / 1000) s" }
        return "\(Double(milliseconds) / 1000) s"
    }
}

extension BlueZClient {
    /// Follows BlueZ's object tree (from a fresh snapshot) until `condition` gives a value, and returns it.
    ///
    /// Fails with `BlueZWaitTimeout` naming `what` when `timeout` passes first or the watch ends.
    package func waitForTree<Value: Sendable>(
        what: String, timeout: Duration, _ condition: @escaping @Sendable (BlueZObjectTree) -> Value?
    ) async throws -> Value {
        let found: Value? = try await withThrowingTaskGroup(of: Value?.self) { group in
            group.addTask {
                var tree = BlueZObjectTree(maxDevices: Self.toolTreeBound)
                for await event in self.watch() {
                    tree.apply(event)
                    if let value = condition(tree) { return value }
                }
                return nil
            }
            group.addTask {
                try await Task.sleep(for: timeout)
                return nil
            }
            let first = try await group.next() ?? nil
            group.cancelAll()
            return first
        }
        guard let found else { throw BlueZWaitTimeout(what: what, timeout: timeout) }
        return found
    }

    /// BlueZ's object tree now, from one GetManagedObjects.
    package func currentTree(timeout: Duration) async throws -> BlueZObjectTree {
        var tree = BlueZObjectTree(maxDevices: Self.toolTreeBound)
        _ = tree.replaceAll(with: try await managedObjects(timeout: timeout))
        return tree
    }

    /// GetManagedObjects: every object bluetoothd exports (`a{oa{sa{sv}}}`).
    package func managedObjects(timeout: Duration) async throws -> DBusValue {
        let reply = try await connection.call(
            destination: BlueZName.service, path: "/", interface: BlueZName.objectManager,
            method: "GetManagedObjects", timeout: timeout)
        guard let objects = reply.first else {
            throw DBusError(name: DBusError.failed, message: "GetManagedObjects returned no value")
        }
        return objects
    }

    /// How many devices a one-shot tool keeps in its tree: enough for a crowded room, bounded all the same.
    static let toolTreeBound = 16_384
}
