internal import CDBus
import Glibc

/// The header fields of one received message, read from libdbus once for every rule it is matched against (each
/// read walks the header's field table), and its first argument only when a rule asks for it.
struct DBusMessageFields {
    /// libdbus's message; nil for one read off the wire, whose first string is read with its header.
    let message: OpaquePointer?
    let sender: UnsafePointer<CChar>?
    let interface: UnsafePointer<CChar>?
    let member: UnsafePointer<CChar>?
    let path: UnsafePointer<CChar>?
    private var firstString: UnsafePointer<CChar>??

    init(_ message: OpaquePointer) {
        self.message = message
        sender = dbus_message_get_sender(message)
        interface = dbus_message_get_interface(message)
        member = dbus_message_get_member(message)
        path = dbus_message_get_path(message)
    }

    /// The fields of a message read off the wire (see `DBusWireRelay`), pointing into its bytes.
    init(wire header: DBusWireHeader) {
        message = nil
        sender = header.sender
        interface = header.interface
        member = header.member
        path = header.path
        firstString = .some(header.firstString)
    }

    /// Whether the message is the signal `member` of `interface`, compared in place.
    func isSignal(_ interface: UnsafePointer<CChar>, _ member: UnsafePointer<CChar>) -> Bool {
        guard let ownMember = self.member, let ownInterface = self.interface else { return false }
        return strcmp(ownMember, member) == 0 && strcmp(ownInterface, interface) == 0
    }

    /// The first argument when it is a string.
    mutating func firstArgument() -> UnsafePointer<CChar>? {
        if let firstString { return firstString }
        guard let message else { return nil }
        var iterator = DBusMessageIter()
        var value: UnsafePointer<CChar>?
        if dbus_message_iter_init(message, &iterator) != 0,
            dbus_message_iter_get_arg_type(&iterator) == DBusTypeCode.string
        {
            dbus_message_iter_get_basic(&iterator, &value)
        }
        firstString = .some(value)
        return value
    }

    /// Whether the sender is `name` or, for a well-known name, its current owner by `owners`. Looked up for each rule
    /// that names a sender, not remembered for the message: nearly every signal meets one such rule (the tap that
    /// takes it), and keeping the name for a second cost a retain and a release of it for every signal.
    func sentBy(_ name: String, owners: TrackedOwners) -> Bool {
        guard let sender else { return false }
        return DBusMatchRule.equal(sender, name)
            || (owners.reading(name) { tracked in tracked.owner.map { DBusMatchRule.equal(sender, $0) } ?? false }
                ?? false)
    }
}

extension DBusMatchRule {
    /// Whether a signal's header fields and first argument satisfy the rule, compared in place in the message as
    /// libdbus holds it, so matching creates no String (a stream or a tap decodes only what it takes).
    /// `owners` gives the current unique name of a well-known `sender`, when known. A value handed in, not a closure over
    /// the connection's state: such a closure is isolated to the connection and checks its executor on every call,
    /// and BlueZ's signals, sent from a unique name, ask for the owner once per rule.
    func matches(_ message: inout DBusMessageFields, owners: TrackedOwners) -> Bool {
        if let interface, !Self.equal(message.interface, interface) { return false }
        if let member, !Self.equal(message.member, member) { return false }
        if let path, !Self.equal(message.path, path) { return false }
        if let pathNamespace, pathNamespace != "/" {
            guard let messagePath = message.path else { return false }
            let inside = pathNamespace.withCString { namespace in
                let length = strlen(namespace)
                guard strncmp(messagePath, namespace, length) == 0 else { return false }
                let next = messagePath[length]
                return next == 0 || next == CChar(UInt8(ascii: "/"))
            }
            if !inside { return false }
        }
        if let sender, !message.sentBy(sender, owners: owners) { return false }
        if let arg0, !Self.equal(message.firstArgument(), arg0) { return false }
        return true
    }

    static func equal(_ field: UnsafePointer<CChar>?, _ expected: String) -> Bool {
        guard let field else { return false }
        return expected.withCString { strcmp(field, $0) == 0 }
    }
}
