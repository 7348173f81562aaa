internal import CDBus
import Glibc
import Logging
import Polling

/// One signal stream's rule and its end of the stream.
/// A class for the same reason as `SignalTap`: every signal that reaches the subscriptions walks them all.
final class SignalSubscription: Sendable {
    let rule: DBusMatchRule
    let continuation: AsyncStream<DBusSignal>.Continuation
    let drops: DBusCounter

    init(rule: DBusMatchRule, continuation: AsyncStream<DBusSignal>.Continuation, drops: DBusCounter) {
        self.rule = rule
        self.continuation = continuation
        self.drops = drops
    }

    func matches(_ fields: inout DBusMessageFields, owners: TrackedOwners) -> Bool {
        rule.matches(&fields, owners: owners)
    }
}

/// The current owner of a well-known name used as a rule's `sender`, kept up to date from NameOwnerChanged.
struct TrackedOwner {
    var owner: String?
    var users: Int
    /// NameOwnerChanged signals seen so far: a GetNameOwner reply is stale when one arrived while it was awaited.
    var changes = 0
    /// `owner` is the bus's answer (GetNameOwner replied, or a NameOwnerChanged came), not the initial nil.
    var known: Bool { answered || changes > 0 }
    var answered = false
}

/// The tracked owners by well-known name: a program names one or two services, and every signal matched against a
/// rule with a `sender` looks its owner up.
typealias TrackedOwners = ShortTable<String, TrackedOwner>

extension DBusConnection {
    /// Subscribes to the signals matching `rule`.
    ///
    /// Buffer policy: `buffering` bounds what waits for the consumer (default: the newest 4096 signals); each
    /// signal dropped on overflow is counted in the stream's `droppedCount` and the connection's
    /// `droppedSignalCount`. Several streams may match the same signal; each gets its own copy. `AddMatch` is sent
    /// before this returns; `RemoveMatch` is sent when the consumer stops iterating or drops the stream.
    package func signals(
        matching rule: DBusMatchRule, buffering: DBusSignalBuffering = .standard
    ) async throws -> DBusSignalStream {
        _ = try requireHandle("AddMatch \(rule.ruleString)")
        let policy: AsyncStream<DBusSignal>.Continuation.BufferingPolicy
        switch buffering {
        case .dropOldest(let limit): policy = .bufferingNewest(max(1, limit))
        case .dropNewest(let limit): policy = .bufferingOldest(max(1, limit))
        }
        let (stream, continuation) = AsyncStream.makeStream(of: DBusSignal.self, bufferingPolicy: policy)
        let token = makeToken()
        let drops = DBusCounter()
        subscriptions[token] = SignalSubscription(rule: rule, continuation: continuation, drops: drops)
        continuation.onTermination = { [weak self] _ in
            self?.loop.execute { [weak self] in
                self?.loopIsolated { $0.removeSubscription(token) }
            }
        }
        do {
            try await addRule(rule)
        } catch {
            continuation.finish()
            throw error
        }
        return DBusSignalStream(stream: stream, drops: drops)
    }

    private func removeSubscription(_ token: UInt64) {
        guard let subscription = subscriptions.removeValue(forKey: token) else { return }
        removeRule(subscription.rule)
    }

    /// Asks the bus for the signals `rule` matches (and follows the owner of a well-known sender name).
    func addRule(_ rule: DBusMatchRule) async throws {
        if let sender = rule.sender, isWellKnown(sender) { try await trackOwner(of: sender) }
        do {
            _ = try await callBus("AddMatch", [.string(rule.ruleString)])
        } catch {
            if let sender = rule.sender, isWellKnown(sender) { untrackOwner(of: sender) }
            throw error
        }
        logger.trace("dbus.match.added", metadata: ["dbus.rule": "\(rule.ruleString)"])
    }

    func removeRule(_ rule: DBusMatchRule) {
        if let sender = rule.sender, isWellKnown(sender) { untrackOwner(of: sender) }
        removeMatch(rule.ruleString)
    }

    private func removeMatch(_ rule: String) {
        guard handle != nil else { return }
        do {
            try send(
                destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus",
                method: "RemoveMatch", arguments: [.string(rule)])
            logger.trace("dbus.match.removed", metadata: ["dbus.rule": "\(rule)"])
        } catch {
            logger.debug("dbus.match.remove_failed", metadata: ["dbus.rule": "\(rule)", "error": "\(error)"])
        }
    }

    private func isWellKnown(_ name: String) -> Bool {
        !name.hasPrefix(":") && name != "org.freedesktop.DBus"
    }

    private static func ownerRule(_ name: String) -> DBusMatchRule {
        DBusMatchRule(
            sender: "org.freedesktop.DBus", interface: "org.freedesktop.DBus", member: "NameOwnerChanged",
            arg0: name)
    }

    /// Signals carry the sender's unique name, so a rule naming `org.bluez` needs to know who owns it now.
    func trackOwner(of name: String) async throws {
        if trackedOwners[name] != nil {
            trackedOwners[name]!.users += 1
            return
        }
        trackedOwners[name] = TrackedOwner(owner: nil, users: 1)
        _ = try await callBus("AddMatch", [.string(Self.ownerRule(name).ruleString)])
        let owner = try await getNameOwner(name)
        // The reply resumes this task only after the signals dispatched with it, so a NameOwnerChanged handled
        // meanwhile may be newer than the reply: then the signal's owner stands.
        if let tracked = trackedOwners[name], tracked.changes == 0 {
            trackedOwners[name]!.owner = owner
            trackedOwners[name]!.answered = true
        }
    }

    private func untrackOwner(of name: String) {
        guard var tracked = trackedOwners[name] else { return }
        tracked.users -= 1
        if tracked.users > 0 {
            trackedOwners[name] = tracked
        } else {
            trackedOwners[name] = nil
            removeMatch(Self.ownerRule(name).ruleString)
        }
    }

    /// Fans a signal out to the taps, then to every stream whose rule matches; decodes it at most once, and only
    /// when a stream takes it (rules are matched against the message in place).
    func deliverSignal(_ message: OpaquePointer, _ fields: DBusMessageFields) {
        var fields = fields
        if !trackedOwners.isEmpty, fields.isSignal("org.freedesktop.DBus", "NameOwnerChanged"),
            let sender = fields.sender, strcmp(sender, "org.freedesktop.DBus") == 0,
            let name = DBusMessageReader.firstString(of: message), trackedOwners[name] != nil
        {
            let newOwner = DBusMessageReader.arguments(of: message).last?.string
            trackedOwners[name]!.owner = (newOwner?.isEmpty ?? true) ? nil : newOwner
            trackedOwners[name]!.changes += 1
        }
        deliverSignal(DBusSignalMessage(message), &fields)
    }

    /// Offers a signal to the taps, then to the streams: from libdbus, or read off the wire (see `DBusWireRelay`).
    func deliverSignal(_ view: DBusSignalMessage, _ fields: inout DBusMessageFields) {
        let owners = trackedOwners
        // The first tap that matches says whether the signal can wait (see `paceReading`); one that no tap
        // matches cannot.
        var matched = false
        if !taps.isEmpty {
            for (_, tap) in taps.entries where tap.matches(&fields, owners: owners) {
                if !matched {
                    matched = true
                    if !tap.defersReading { noteUrgentMessage() }
                }
                if tap.handler(view) { return }
            }
        }
        if !matched { noteUrgentMessage() }
        var decoded: DBusSignal?
        for (_, subscription) in subscriptions {
            guard subscription.matches(&fields, owners: owners) else { continue }
            let signal = decoded ?? view.decoded
            decoded = signal
            if case .dropped = subscription.continuation.yield(signal) {
                subscription.drops.increment()
                droppedSignals.increment()
            }
        }
    }
}
