/// A signal match rule, as sent to the bus with `AddMatch` and applied again locally so that each stream only
/// sees its own signals (the bus delivers the union of all of a connection's rules).
package struct DBusMatchRule: Sendable, Hashable {
    /// A unique name (`:1.5`) or a well-known name (`org.bluez`); a well-known name matches its current owner.
    package var sender: String?
    package var interface: String?
    package var member: String?
    package var path: String?
    /// Matches this path and every path below it.
    package var pathNamespace: String?
    /// Matches when the first argument is this string.
    package var arg0: String?

    package init(
        sender: String? = nil, interface: String? = nil, member: String? = nil, path: String? = nil,
        pathNamespace: String? = nil, arg0: String? = nil
    ) {
        self.sender = sender
        self.interface = interface
        self.member = member
        self.path = path
        self.pathNamespace = pathNamespace
        self.arg0 = arg0
    }

    /// The rule in the bus's syntax, e.g. `type='signal',interface='org.freedesktop.DBus.Properties'`.
    package var ruleString: String {
        var parts = ["type='signal'"]
        func add(_ key: String, _ value: String?) {
            // Inside quotes only the apostrophe needs escaping: close, escaped quote, reopen.
            if let value { parts.append("\(key)='\(value.replacingOccurrences(of: "'", with: "'\\''"))'") }
        }
        add("sender", sender)
        add("interface", interface)
        add("member", member)
        add("path", path)
        add("path_namespace", pathNamespace)
        add("arg0", arg0)
        return parts.joined(separator: ",")
    }
}

extension String {
    /// `replacingOccurrences` without Foundation.
    func replacingOccurrences(of target: Character, with replacement: String) -> String {
        var result = ""
        result.reserveCapacity(utf8.count)
        for character in self {
            if character == target { result += replacement } else { result.append(character) }
        }
        return result
    }
}
