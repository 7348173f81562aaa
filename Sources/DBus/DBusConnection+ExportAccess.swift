import Logging

extension DBusConnection {
    /// From now on, the objects this connection exports answer only the connection that currently owns `name`
    /// (resolved with GetNameOwner, then followed through NameOwnerChanged); any other caller gets
    /// `org.freedesktop.DBus.Error.AccessDenied`, and so does everyone while nobody owns `name`.
    ///
    /// On the system bus any local process may send a method call to any connection that the bus policy lets it
    /// reach, so an exported GATT application or advertisement would otherwise answer anyone: the policy file is
    /// not the only gate. Idempotent for the same name.
    ///
    /// - Throws: `DBusError` when the owner cannot be looked up, or when another name was already set.
    package func restrictExportedObjects(toOwnerOf name: String) async throws {
        if let current = exportedObjectsCaller {
            guard current == name else {
                throw DBusError.invalid("exported objects already answer only the owner of \(current)")
            }
            return
        }
        try DBusNameCheck.busName(name)
        exportedObjectsCaller = name
        do {
            try await trackOwner(of: name)
        } catch {
            exportedObjectsCaller = nil
            throw error
        }
    }

    /// The AccessDenied error for a caller that may not call exported objects, or nil when it may.
    func refusalOfCaller(_ sender: String) -> DBusError? {
        guard let allowed = exportedObjectsCaller else { return nil }
        let owner = trackedOwners[allowed]?.owner
        if let owner, owner == sender { return nil }
        refusedCalls.increment()
        logger.debug("dbus.call.refused", metadata: ["dbus.sender": "\(sender)", "dbus.allowed": "\(allowed)"])
        return DBusError(
            name: DBusError.accessDenied,
            message: owner == nil
                ? "only the owner of \(allowed) may call this object, and \(allowed) has no owner"
                : "only the owner of \(allowed) may call this object")
    }
}
