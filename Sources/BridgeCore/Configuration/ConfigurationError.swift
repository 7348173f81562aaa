/// One problem in a configuration file, with the path of the offending value.
package struct ConfigurationError: Error, Hashable, Sendable, CustomStringConvertible {
    /// Where the problem is, such as `devices[2].characteristics[0].uuid`; empty for the whole file.
    package let path: String
    /// What is wrong, quoting the value where it helps.
    package let message: String

    /// Creates an error at a path.
    package init(path: String, message: String) {
        self.path = path
        self.message = message
    }

    /// `path: message`, or just the message for problems with the whole file.
    package var description: String { path.isEmpty ? message : "\(path): \(message)" }
}

/// Every problem found in a configuration file; loading never stops at the first one.
package struct ConfigurationErrors: Error, Hashable, Sendable, CustomStringConvertible {
    /// The problems in the order they were found.
    package let errors: [ConfigurationError]

    /// Wraps a non-empty list of problems.
    package init(_ errors: [ConfigurationError]) {
        self.errors = errors
    }

    /// One problem per line.
    package var description: String { errors.map(\.description).joined(separator: "\n") }
}
