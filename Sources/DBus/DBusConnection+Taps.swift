import Glibc

/// A synchronous signal handler and its rule.
///
/// A class: every signal walks the taps, and copying a struct out of the table retained and released each of the
/// rule's strings and the handler.
final class SignalTap: Sendable {
    let rule: DBusMatchRule
    /// Signals this tap matches first may wait for paced reading (see `DBusConnection.paceReading`).
    let defersReading: Bool
    let handler: @Sendable (DBusSignalMessage) -> Bool
    /// The rule's fields as C strings, made once: every signal is compared with each tap's.
    private let fields: MatchRuleFields

    init(rule: DBusMatchRule, defersReading: Bool, handler: @escaping @Sendable (DBusSignalMessage) -> Bool) {
        self.rule = rule
        self.defersReading = defersReading
        self.handler = handler
        fields = MatchRuleFields(rule)
    }

    /// Matched here, inside the tap, where the rule is read in place: matched from outside, every signal copied
    /// the rule out of each tap it was offered to (retaining and releasing its six strings).
    func matches(_ message: inout DBusMessageFields, owners: TrackedOwners) -> Bool {
        fields.matches(&message, owners: owners)
    }
}

/// A rule's interface, member, path and first argument as C strings, compared with a signal's header fields by
/// `strcmp` alone: through the rule's Strings each comparison made the String's C form first (some 50 instructions,
/// six times a signal among two taps). The fields that tell the taps of one program apart (member, first argument)
/// are compared before the sender, whose owner is looked up.
private final class MatchRuleFields: Sendable {
    // Sendable: written once by init, read only, freed by deinit.
    nonisolated(unsafe) private let interface: UnsafeMutablePointer<CChar>?
    nonisolated(unsafe) private let member: UnsafeMutablePointer<CChar>?
    nonisolated(unsafe) private let path: UnsafeMutablePointer<CChar>?
    nonisolated(unsafe) private let arg0: UnsafeMutablePointer<CChar>?
    /// The rule's path namespace and sender, checked as the rule itself checks them; nil when it names neither.
    private let rest: DBusMatchRule?

    init(_ rule: DBusMatchRule) {
        interface = Self.cString(rule.interface)
        member = Self.cString(rule.member)
        path = Self.cString(rule.path)
        arg0 = Self.cString(rule.arg0)
        rest =
            rule.sender == nil && rule.pathNamespace == nil
            ? nil : DBusMatchRule(sender: rule.sender, pathNamespace: rule.pathNamespace)
    }

    deinit {
        free(interface)
        free(member)
        free(path)
        free(arg0)
    }

    /// `rule.matches(&message, owners:)` of the rule these fields were made of: the same conjunction in another
    /// order.
    func matches(_ message: inout DBusMessageFields, owners: TrackedOwners) -> Bool {
        if let member, !Self.equal(message.member, member) { return false }
        if let arg0, !Self.equal(message.firstArgument(), arg0) { return false }
        if let interface, !Self.equal(message.interface, interface) { return false }
        if let path, !Self.equal(message.path, path) { return false }
        return rest?.matches(&message, owners: owners) ?? true
    }

    private static func cString(_ text: String?) -> UnsafeMutablePointer<CChar>? {
        guard let text else { return nil }
        // Out of memory ends the process, as any Swift allocation does: a field lost here would match every signal.
        guard let copy = strdup(text) else { fatalError("MatchRuleFields: out of memory copying \(text)") }
        return copy
    }

    private static func equal(_ field: UnsafePointer<CChar>?, _ expected: UnsafeMutablePointer<CChar>) -> Bool {
        guard let field else { return false }
        return strcmp(field, expected) == 0
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
