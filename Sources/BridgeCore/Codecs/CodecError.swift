/// A value that a ``PayloadCodec`` could not decode from the radio or encode from an MQTT payload.
package struct CodecError: Error, Equatable, Sendable, CustomStringConvertible {
    /// What was wrong and, where it helps, what the codec expects.
    package let message: String

    /// Creates an error with a complete, user-facing message.
    package init(_ message: String) {
        self.message = message
    }

    package var description: String { message }
}
