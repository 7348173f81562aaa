import Foundation
import Yams

extension BridgeConfiguration {
    /// Reads and validates a configuration file.
    ///
    /// - Throws: ``ConfigurationErrors`` with every problem found, including an unreadable file.
    package static func load(path: String) throws(ConfigurationErrors) -> BridgeConfiguration {
        let text: String
        do {
            text = try String(contentsOfFile: path, encoding: .utf8)
        } catch {
            throw ConfigurationErrors([
                ConfigurationError(path: "", message: "cannot read \(path): \(error.localizedDescription)")
            ])
        }
        return try BridgeConfiguration(yaml: text)
    }

    /// Parses and validates YAML (or JSON) text.
    ///
    /// - Throws: ``ConfigurationErrors`` with every problem found, each with its path.
    package init(yaml: String) throws(ConfigurationErrors) {
        let context = ConfigurationDecodingContext()
        let file: BridgeConfigurationFile
        do {
            guard try Yams.compose(yaml: yaml) != nil else {
                throw ConfigurationErrors([
                    ConfigurationError(path: "", message: "the configuration is empty (mqtt.url is required)")
                ])
            }
            file = try YAMLDecoder().decode(
                BridgeConfigurationFile.self, from: yaml,
                userInfo: [ConfigurationDecodingContext.userInfoKey: context])
        } catch let errors as ConfigurationErrors {
            throw errors
        } catch let error as YamlError {
            throw ConfigurationErrors([ConfigurationError(path: "", message: Self.describe(error))])
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

    private static func describe(_ error: YamlError) -> String {
        switch error {
        case .scanner(let context, let problem, let mark, _), .parser(let context, let problem, let mark, _),
            .composer(let context, let problem, let mark, _):
            "YAML syntax error at line \(mark.line), column \(mark.column): \(problem)"
                + (context.map { " (\($0.text) starting at line \($0.mark.line), column \($0.mark.column))" } ?? "")
        case .duplicatedKeysInMapping(let duplicates, let context):
            "YAML error at line \(context.mark.line), column \(context.mark.column): duplicate key "
                + duplicates.map { "\"\($0)\"" }.joined(separator: ", ")
        case .reader(let problem, let offset, _, _):
            "YAML cannot be read at byte \(offset ?? 0): \(problem)"
        default:
            "YAML error: \(error)"
        }
    }
}
