/// Why a decoder refused an advertisement. Decoders throw only this, never trap.
package struct DecoderError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The kind of refusal, for counters and tests.
    package enum Code: String, Sendable, Equatable {
        /// The advertisement carries nothing this format reads (no matching service UUID or company id).
        case notThisFormat
        /// Shorter than the format or one of its fields requires.
        case truncated
        /// Longer than any advertisement can be, or longer than the format allows.
        case tooLong
        /// A field holds a value the format does not define.
        case malformed
        /// A valid packet of a kind or version this decoder does not read.
        case unsupported
        /// The payload is encrypted and no bindkey, or no decryption, was given.
        case missingKey
        /// Decryption failed: wrong bindkey, or the packet was altered.
        case decryptionFailed
        /// The device has a bindkey but this packet is not encrypted: anyone could have sent it.
        case notEncrypted
    }

    package let code: Code
    /// What was wrong, for logs; never contains key material.
    package let message: String

    /// Creates an error.
    package init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    package var description: String { "\(code.rawValue): \(message)" }
}
