/// A signal received from the bus, decoded into Sendable values.
package struct DBusSignal: Sendable, Hashable {
    /// The sender's unique name (`:1.7`), or `org.freedesktop.DBus` for the bus itself.
    package var sender: String
    package var path: String
    package var interface: String
    package var member: String
    package var arguments: [DBusValue]

    package init(sender: String, path: String, interface: String, member: String, arguments: [DBusValue]) {
        self.sender = sender
        self.path = path
        self.interface = interface
        self.member = member
        self.arguments = arguments
    }
}

/// What a signal stream does when its consumer falls behind. Every signal dropped is counted.
package enum DBusSignalBuffering: Sendable, Hashable {
    /// Keep the newest `limit` signals; the oldest buffered signal is dropped for each new one.
    case dropOldest(limit: Int)
    /// Keep the first `limit` signals; new signals are dropped while the buffer is full.
    case dropNewest(limit: Int)

    /// The default: a generous buffer that favours recent state.
    package static let standard = DBusSignalBuffering.dropOldest(limit: 4096)
}
