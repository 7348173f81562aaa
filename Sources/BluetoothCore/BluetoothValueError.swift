/// A textual Bluetooth value (address, UUID, flag) that could not be parsed.
///
/// The message quotes the offending text so that configuration errors can be shown as they are,
/// for example `"2A1G" is not a Bluetooth UUID`.
package struct BluetoothValueError: Error, Equatable, Sendable, CustomStringConvertible {
    /// What was wrong, quoting the input.
    package let message: String

    /// Creates an error with a complete, user-facing message.
    package init(_ message: String) {
        self.message = message
    }

    package var description: String { message }
}
