import YAML

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

extension BridgeConfiguration {
    /// Reads and validates a configuration file.
    ///
    /// - Throws: ``ConfigurationErrors`` with every problem found, including an unreadable file.
    package static func load(path: String) throws(ConfigurationErrors) -> BridgeConfiguration {
        let text: String
        switch readText(path, limit: YAMLLimits().inputBytes) {
        case .success(let read): text = read
        case .failure(let problem):
            throw ConfigurationErrors([ConfigurationError(path: "", message: "cannot read \(path): \(problem)")])
        }
        return try BridgeConfiguration(yaml: text)
    }

    /// The file's text, at most `limit` bytes, and refused unless it is UTF-8.
    private static func readText(_ path: String, limit: Int) -> Result<String, BoundedFile.ReadError> {
        BoundedFile.contents(of: path, limit: limit).flatMap { bytes in
            guard let text = String(validating: bytes, as: UTF8.self) else {
                return .failure(BoundedFile.ReadError(description: "not UTF-8 text"))
            }
            return .success(text)
        }
    }

    /// Parses and validates YAML (or JSON) text.
    ///
    /// - Throws: ``ConfigurationErrors`` with every problem found, each with its path.
    package init(yaml: String) throws(ConfigurationErrors) {
        let context = ConfigurationDecodingContext()
        let file: BridgeConfigurationFile
        let document: YAMLNode?
        do {
            document = try YAMLComposer().compose(yaml)
        } catch {
            // YAMLError's description is the message: "YAML syntax error at line L, column C: …" and the like.
            throw ConfigurationErrors([ConfigurationError(path: "", message: error.description)])
        }
        guard let root = document else {
            throw ConfigurationErrors([
                ConfigurationError(path: "", message: "the configuration is empty (mqtt.url is required)")
            ])
        }
        do {
            file = try YAMLDecoder().decode(
                BridgeConfigurationFile.self, from: root,
                userInfo: [ConfigurationDecodingContext.userInfoKey: context])
        } catch {
            // The root is not a mapping, or similar: report it like any other decoding problem.
            context.record(error, at: [])
            throw ConfigurationErrors(context.errors)
        }
        var validator = ConfigurationValidator(decodingErrors: context.errors)
        let configuration = validator.validate(file)
        guard validator.errors.isEmpty, let configuration else { throw ConfigurationErrors(validator.errors) }
        self = configuration
    }

    /// Builds the configuration from already decoded file types.
    package init(validating file: BridgeConfigurationFile) throws(ConfigurationErrors) {
        var validator = ConfigurationValidator(decodingErrors: [])
        let configuration = validator.validate(file)
        guard validator.errors.isEmpty, let configuration else { throw ConfigurationErrors(validator.errors) }
        self = configuration
    }
}
