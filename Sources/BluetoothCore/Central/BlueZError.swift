/// An error reply of the Bluetooth stack: its BlueZ error name (`org.bluez.Error.InProgress`, or the D-Bus name of
/// a transport failure such as `org.freedesktop.DBus.Error.NoReply`) and the message that came with it.
///
/// Defined once: the BlueZ layer turns every D-Bus error into this, so the bridges see no D-Bus type. An ATT error
/// arrives as `org.bluez.Error.Failed` with the ATT code in the message; `attError` reads it.
package struct BlueZError: Error, Sendable, Hashable, CustomStringConvertible {
    package let name: BlueZErrorName
    package let message: String

    package init(_ name: BlueZErrorName, _ message: String = "") {
        self.name = name
        self.message = message
    }

    /// The stack did not answer in time.
    package var isTimeout: Bool { name == .noReply }
    /// The stack is busy with another operation on the object: retried, not reported.
    package var isInProgress: Bool { name == .inProgress }
    /// The ATT error code the message carries, if any.
    package var attError: ATTError? { ATTError(clientReply: BlueZErrorReply(name, message)) }

    package var description: String { message.isEmpty ? name.rawValue : "\(name.rawValue): \(message)" }
}

extension BlueZErrorName {
    /// The D-Bus daemon's answer when bluetoothd did not reply within the call's timeout.
    package static let noReply = BlueZErrorName(rawValue: "org.freedesktop.DBus.Error.NoReply")
}
