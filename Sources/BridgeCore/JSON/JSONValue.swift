/// A parsed JSON value, for the rare command payloads (`/set` envelopes, `bridge/request/<verb>`).
///
/// Numbers keep their source text, so a `transaction` such as `12345678901234567890` is echoed unchanged.
package indirect enum JSONValue: Hashable, Sendable {
    case null
    case bool(Bool)
    case number(String)
    case string(String)
    case array([JSONValue])
    /// Members in document order; a repeated key keeps its last value in ``subscript(_:)``.
    case object([(key: String, value: JSONValue)])

    package static func == (lhs: JSONValue, rhs: JSONValue) -> Bool {
        switch (lhs, rhs) {
        case (.null, .null): true
        case (.bool(let a), .bool(let b)): a == b
        case (.number(let a), .number(let b)): a == b
        case (.string(let a), .string(let b)): a == b
        case (.array(let a), .array(let b)): a == b
        case (.object(let a), .object(let b)):
            a.count == b.count && zip(a, b).allSatisfy { $0.key == $1.key && $0.value == $1.value }
        default: false
        }
    }

    package func hash(into hasher: inout Hasher) {
        switch self {
        case .null: hasher.combine(0)
        case .bool(let value): hasher.combine(value)
        case .number(let text), .string(let text): hasher.combine(text)
        case .array(let values): hasher.combine(values)
        case .object(let members):
            for member in members {
                hasher.combine(member.key)
                hasher.combine(member.value)
            }
        }
    }

    /// The member named `key` of an object (the last one if repeated), else nil.
    package subscript(_ key: String) -> JSONValue? {
        guard case .object(let members) = self else { return nil }
        return members.last(where: { $0.key == key })?.value
    }

    /// The string, when this is a string.
    package var stringValue: String? {
        if case .string(let text) = self { return text }
        return nil
    }

    /// The value serialised back to compact JSON.
    package var serialized: [UInt8] {
        var writer = JSONWriter()
        write(to: &writer)
        return writer.bytes
    }

    /// Writes the value into an enclosing document.
    package func write(to writer: inout JSONWriter) {
        switch self {
        case .null: writer.null()
        case .bool(let value): writer.value(value)
        case .number(let text): writer.rawValue(Array(text.utf8))
        case .string(let text): writer.value(text)
        case .array(let values):
            writer.beginArray()
            for value in values { value.write(to: &writer) }
            writer.endArray()
        case .object(let members):
            writer.beginObject()
            for member in members {
                writer.key(member.key)
                member.value.write(to: &writer)
            }
            writer.endObject()
        }
    }

    /// Parses one JSON document (RFC 8259), surrounding whitespace allowed.
    ///
    /// Bounded: at most `maximumDepth` nested containers, so a hostile payload cannot exhaust the stack.
    package init(parsing bytes: [UInt8], maximumDepth: Int = 32) throws(JSONParseError) {
        var parser = JSONParser(bytes: bytes, maximumDepth: maximumDepth)
        self = try parser.parseDocument()
    }
}

/// Why a payload is not valid JSON, with the byte offset where parsing stopped.
package struct JSONParseError: Error, Equatable, Sendable, CustomStringConvertible {
    /// What was expected or found.
    package let message: String
    /// Offset of the offending byte.
    package let offset: Int

    package var description: String { "invalid JSON at byte \(offset): \(message)" }
}
