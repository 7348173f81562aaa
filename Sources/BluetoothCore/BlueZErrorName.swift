/// A D-Bus error name in the `org.bluez.Error.` namespace, such as `org.bluez.Error.NotPermitted`.
///
/// An extensible struct rather than an enum: BlueZ adds names over versions and the bridge must pass
/// unknown ones through unchanged.
package struct BlueZErrorName: Hashable, Sendable, CustomStringConvertible {
    /// The full D-Bus error name.
    package let rawValue: String

    /// Wraps a full D-Bus error name.
    package init(rawValue: String) {
        self.rawValue = rawValue
    }

    /// Builds `org.bluez.Error.<suffix>`.
    package init(suffix: String) {
        self.rawValue = Self.prefix + suffix
    }

    static let prefix = "org.bluez.Error."

    package static let failed = BlueZErrorName(suffix: "Failed")
    package static let inProgress = BlueZErrorName(suffix: "InProgress")
    package static let notReady = BlueZErrorName(suffix: "NotReady")
    package static let notPermitted = BlueZErrorName(suffix: "NotPermitted")
    package static let notAuthorized = BlueZErrorName(suffix: "NotAuthorized")
    package static let notSupported = BlueZErrorName(suffix: "NotSupported")
    package static let notConnected = BlueZErrorName(suffix: "NotConnected")
    package static let alreadyConnected = BlueZErrorName(suffix: "AlreadyConnected")
    package static let alreadyExists = BlueZErrorName(suffix: "AlreadyExists")
    package static let doesNotExist = BlueZErrorName(suffix: "DoesNotExist")
    package static let invalidArguments = BlueZErrorName(suffix: "InvalidArguments")
    package static let invalidLength = BlueZErrorName(suffix: "InvalidLength")
    package static let invalidOffset = BlueZErrorName(suffix: "InvalidOffset")
    package static let invalidValueLength = BlueZErrorName(suffix: "InvalidValueLength")
    package static let improperlyConfigured = BlueZErrorName(suffix: "ImproperlyConfigured")
    package static let notAvailable = BlueZErrorName(suffix: "NotAvailable")
    package static let authenticationCanceled = BlueZErrorName(suffix: "AuthenticationCanceled")
    package static let authenticationFailed = BlueZErrorName(suffix: "AuthenticationFailed")
    package static let authenticationRejected = BlueZErrorName(suffix: "AuthenticationRejected")
    package static let authenticationTimeout = BlueZErrorName(suffix: "AuthenticationTimeout")
    package static let connectionAttemptFailed = BlueZErrorName(suffix: "ConnectionAttemptFailed")
    package static let profileUnavailable = BlueZErrorName(suffix: "BREDR.ProfileUnavailable")

    /// True for `InProgress`, which is routine for concurrent GATT operations and should be retried.
    package var isRetriable: Bool { self == .inProgress }

    package var description: String { rawValue }
}

/// A D-Bus error reply: the name and the human-readable message.
package struct BlueZErrorReply: Hashable, Sendable, CustomStringConvertible {
    /// The D-Bus error name.
    package let name: BlueZErrorName
    /// The message text, possibly empty.
    package let message: String

    /// Creates a reply from its name and message.
    package init(_ name: BlueZErrorName, _ message: String = "") {
        self.name = name
        self.message = message
    }

    package var description: String { message.isEmpty ? name.rawValue : "\(name.rawValue): \(message)" }
}
