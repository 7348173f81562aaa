/// Collects the decoding problems of one configuration load.
///
/// A reference type because `Decodable` initialisers can only reach shared state through the decoder's
/// `userInfo`. It lives for one synchronous decode on one thread and is never shared across tasks.
final class ConfigurationDecodingContext {
    static let userInfoKey = CodingUserInfoKey(rawValue: "gattway.configuration.context")!

    private(set) var errors: [ConfigurationError] = []

    /// The context of the decode in progress; a detached one when decoding without `BridgeConfiguration`
    /// (the file types then decode leniently and drop their problems).
    static func current(in decoder: any Decoder) -> ConfigurationDecodingContext {
        decoder.userInfo[userInfoKey] as? ConfigurationDecodingContext ?? ConfigurationDecodingContext()
    }

    func record(path: [any CodingKey], message: String) {
        errors.append(ConfigurationError(path: Self.format(path), message: message))
    }

    func record(_ error: any Error, at fallbackPath: [any CodingKey], expecting expected: Any.Type? = nil) {
        guard let decodingError = error as? DecodingError else {
            record(path: fallbackPath, message: "\(error)")
            return
        }
        switch decodingError {
        case .typeMismatch(let type, let context):
            // The decoder names the primitive it tried (Int for an Int? field, say); prefer the field's declared type.
            record(
                path: context.codingPath.isEmpty ? fallbackPath : context.codingPath,
                message: "expected \(Self.describe(expected ?? type))")
        case .valueNotFound(let type, let context):
            record(
                path: context.codingPath.isEmpty ? fallbackPath : context.codingPath,
                message: "expected \(Self.describe(expected ?? type))")
        case .dataCorrupted(let context):
            record(
                path: context.codingPath.isEmpty ? fallbackPath : context.codingPath,
                message: context.debugDescription)
        case .keyNotFound(let key, let context):
            record(path: context.codingPath + [key], message: "is required")
        @unknown default:
            record(path: fallbackPath, message: "\(decodingError)")
        }
    }

    /// `devices[2].characteristics[0].uuid`.
    static func format(_ path: [any CodingKey]) -> String {
        var out = ""
        for key in path {
            if let index = key.intValue {
                out += "[\(index)]"
            } else {
                out += out.isEmpty ? key.stringValue : "." + key.stringValue
            }
        }
        return out
    }

    private static func describe(_ type: Any.Type) -> String {
        switch type {
        case is String.Type: "a string"
        case is Int.Type: "an integer"
        case is Double.Type: "a number"
        case is Bool.Type: "true or false"
        case is [String].Type: "a list of strings"
        default: String(describing: type).hasPrefix("Array") ? "a list" : "a mapping"
        }
    }
}
