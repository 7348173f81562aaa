/// Flags for `RequestName`.
package struct DBusRequestNameFlags: OptionSet, Sendable, Hashable {
    package let rawValue: UInt32
    package init(rawValue: UInt32) { self.rawValue = rawValue }

    package static let allowReplacement = DBusRequestNameFlags(rawValue: 1)
    package static let replaceExisting = DBusRequestNameFlags(rawValue: 2)
    package static let doNotQueue = DBusRequestNameFlags(rawValue: 4)
}

package enum DBusRequestNameReply: UInt32, Sendable, Hashable {
    case primaryOwner = 1
    case inQueue = 2
    case exists = 3
    case alreadyOwner = 4
}

package enum DBusReleaseNameReply: UInt32, Sendable, Hashable {
    case released = 1
    case nonExistent = 2
    case notOwner = 3
}

extension DBusConnection {
    /// Asks the bus for a well-known name.
    package func requestName(_ name: String, flags: DBusRequestNameFlags = [.doNotQueue]) async throws
        -> DBusRequestNameReply
    {
        let reply = try await callBus("RequestName", [.string(name), .uint32(flags.rawValue)])
        guard let code = reply.first?.uint32, let result = DBusRequestNameReply(rawValue: code) else {
            throw DBusError(name: DBusError.failed, message: "RequestName(\(name)) gave an unexpected reply \(reply)")
        }
        return result
    }

    package func releaseName(_ name: String) async throws -> DBusReleaseNameReply {
        let reply = try await callBus("ReleaseName", [.string(name)])
        guard let code = reply.first?.uint32, let result = DBusReleaseNameReply(rawValue: code) else {
            throw DBusError(name: DBusError.failed, message: "ReleaseName(\(name)) gave an unexpected reply \(reply)")
        }
        return result
    }

    /// Whether `name` has an owner on the bus. A name this connection follows already (a signal rule names it as
    /// its sender) is answered from the NameOwnerChanged signals read so far, without a call: a health check asking
    /// every few seconds would otherwise end paced reading (`paceReading`) for its quiet period each time.
    package func nameHasOwner(_ name: String) async throws -> Bool {
        if let tracked = trackedOwners[name], tracked.known { return tracked.owner != nil }
        let reply = try await callBus("NameHasOwner", [.string(name)])
        guard let owned = reply.first?.bool else {
            throw DBusError(name: DBusError.failed, message: "NameHasOwner(\(name)) gave an unexpected reply \(reply)")
        }
        return owned
    }

    /// The unique name owning `name`, or nil when nobody owns it.
    package func getNameOwner(_ name: String) async throws -> String? {
        do {
            return try await callBus("GetNameOwner", [.string(name)]).first?.string
        } catch let error as DBusError where error.name == DBusError.nameHasNoOwner {
            return nil
        }
    }

    /// Every change of `name`'s owner from now on (appearing, leaving, replaced).
    package func nameOwnerChanges(
        of name: String, buffering: DBusSignalBuffering = .dropOldest(limit: 64)
    ) async throws -> DBusNameOwnerChangeStream {
        let rule = DBusMatchRule(
            sender: "org.freedesktop.DBus", interface: "org.freedesktop.DBus", member: "NameOwnerChanged",
            path: "/org/freedesktop/DBus", arg0: name)
        return DBusNameOwnerChangeStream(signals: try await signals(matching: rule, buffering: buffering))
    }
}
