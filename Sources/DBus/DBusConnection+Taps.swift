/// A synchronous signal handler and its rule.
///
/// A class: every signal walks the taps, and copying a struct out of the table retained and released each of the
/// rule's strings and the handler.
final class SignalTap: Sendable {
    let rule: DBusMatchRule
    /// Signals this tap matches first may wait for paced reading (see `DBusConnection.paceReading`).
    let defersReading: Bool
    let handler: @Sendable (DBusSignalMessage) -> Bool

    init(rule: DBusMatchRule, defersReading: Bool, handler: @escaping @Sendable (DBusSignalMessage) -> Bool) {
        self.rule = rule
        self.defersReading = defersReading
        self.handler = handler
    }

    /// Matched here, inside the tap, where the rule is read in place: matched from outside, every signal copied
    /// the rule out of each tap it was offered to (retaining and releasing its six strings).
    func matches(_ fields: inout DBusMessageFields, owners: TrackedOwners) -> Bool {
        rule.matches(&fields, owners: owners)
    }
}

/// The taps in the order they were registered, which is the order a signal is offered to them: a dictionary's
/// order changes from run to run with its hash seed, and so would which of two matching taps takes a signal first
/// and how many rules a signal is matched against before its tap.
struct SignalTaps {
    private(set) var entries: [(token: UInt64, tap: SignalTap)] = []

    var isEmpty: Bool { entries.isEmpty }

    mutating func add(_ tap: SignalTap, token: UInt64) {
        entries.append((token, tap))
    }

    mutating func remove(_ token: UInt64) -> SignalTap? {
        guard let index = entries.firstIndex(where: { $0.token == token }) else { return nil }
        return entries.remove(at: index).tap
    }

    mutating func removeAll() {
        entries.removeAll()
    }
}

/// A registered tap; remove it with `DBusConnection.removeTap(_:)`.
package struct DBusSignalTapToken: Sendable, Hashable {
    let token: UInt64
}

extension DBusConnection {
    /// Hands each signal matching `rule` to `handler` on the connection's loop, as the signal is dispatched
    /// and before any signal stream sees it. When `handler` returns true the signal is consumed: no stream gets it.
    ///
    /// For hot paths only: a stream costs a hand-off to the consumer's task per signal (or per burst), a tap costs
    /// none. The handler must be quick and must not block, since it holds up every other message of the connection.
    package func tapSignals(
        matching rule: DBusMatchRule, handler: @escaping @Sendable (DBusSignal) -> Bool
    ) async throws -> DBusSignalTapToken {
        try await tapMessages(matching: rule) { message in handler(message.decoded) }
    }

    /// `tapSignals`, with the signal read in place instead of decoded: the handler takes out only what it needs
    /// (see `DBusSignalMessage`), so a signal costs no allocation beyond that.
    ///
    /// `defersReading`: the signals this tap is the first to match can wait a few milliseconds, so that reading
    /// may pause while they are all that arrives (see `paceReading`).
    package func tapMessages(
        matching rule: DBusMatchRule, defersReading: Bool = false,
        handler: @escaping @Sendable (DBusSignalMessage) -> Bool
    ) async throws -> DBusSignalTapToken {
        _ = try requireHandle("AddMatch \(rule.ruleString)")
        let token = makeToken()
        taps.add(SignalTap(rule: rule, defersReading: defersReading, handler: handler), token: token)
        do {
            try await addRule(rule)
        } catch {
            _ = taps.remove(token)
            throw error
        }
        return DBusSignalTapToken(token: token)
    }

    /// Removes a tap; its signals go to the streams again.
    package func removeTap(_ tap: DBusSignalTapToken) {
        guard let removed = taps.remove(tap.token) else { return }
        removeRule(removed.rule)
    }
}
