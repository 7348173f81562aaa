internal import CDBus
import Glibc

extension DBusMatchRule {
    /// Whether a signal's header fields and first argument satisfy the rule, compared in place in the message as
    /// libdbus holds it, so matching creates no String (a stream or a tap decodes only what it takes).
    /// `owners` gives the current unique name of a well-known `sender`, when known. A dictionary, not a closure over
    /// the connection's state: such a closure is isolated to the connection and checks its executor on every call,
    /// and BlueZ's signals, sent from a unique name, ask for the owner once per rule.
    func matches(_ message: OpaquePointer, owners: [String: TrackedOwner]) -> Bool {
        if let sender {
            guard let messageSender = dbus_message_get_sender(message) else { return false }
            if !Self.equal(messageSender, sender) {
                guard let owner = owners[sender]?.owner, Self.equal(messageSender, owner) else { return false }
            }
        }
        if let interface, !Self.equal(dbus_message_get_interface(message), interface) { return false }
        if let member, !Self.equal(dbus_message_get_member(message), member) { return false }
        if let path, !Self.equal(dbus_message_get_path(message), path) { return false }
        if let pathNamespace, pathNamespace != "/" {
            guard let messagePath = dbus_message_get_path(message) else { return false }
            let inside = pathNamespace.withCString { namespace in
                let length = strlen(namespace)
                guard strncmp(messagePath, namespace, length) == 0 else { return false }
                let next = messagePath[length]
                return next == 0 || next == CChar(UInt8(ascii: "/"))
            }
            if !inside { return false }
        }
        if let arg0 {
            var iterator = DBusMessageIter()
            guard dbus_message_iter_init(message, &iterator) != 0,
                dbus_message_iter_get_arg_type(&iterator) == DBusTypeCode.string
            else { return false }
            var first: UnsafePointer<CChar>?
            dbus_message_iter_get_basic(&iterator, &first)
            if !Self.equal(first, arg0) { return false }
        }
        return true
    }

    private static func equal(_ field: UnsafePointer<CChar>?, _ expected: String) -> Bool {
        guard let field else { return false }
        return expected.withCString { strcmp(field, $0) == 0 }
    }
}
