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
                writer.key(JSONObjectKey(text: member.key))
                member.value.write(to: &writer)
            }
            writer.endObject()
        }
    }

    /// Parses one JSON document (RFC 8259), surrounding whitespace allowed, within `limits`.
    ///
    /// Bounded in depth (a hostile payload cannot exhaust the stack), in width and in the total number of values
    /// (it cannot make Gattway build a large tree from a small-looking payload).
    package init(parsing bytes: [UInt8], limits: JSONLimits = .commands) throws(JSONParseError) {
        var parser = JSONParser(bytes: bytes, limits: limits)
        self = try parser.parseDocument()
    }

    /// Parses one JSON document with the default width and value limits and the given depth.
    package init(parsing bytes: [UInt8], maximumDepth: Int) throws(JSONParseError) {
        var limits = JSONLimits.commands
        limits.maximumDepth = maximumDepth
        try self.init(parsing: bytes, limits: limits)
    }
}

/// How large a JSON document Gattway agrees to parse from untrusted input.
package struct JSONLimits: Sendable, Hashable {
    /// Nested containers at most (an object inside an array is depth 2).
    package var maximumDepth: Int
    /// Members of one object or elements of one array at most.
    package var maximumWidth: Int
    /// Values in the whole document at most, containers included.
    package var maximumValues: Int

    package init(maximumDepth: Int, maximumWidth: Int, maximumValues: Int) {
        self.maximumDepth = maximumDepth
        self.maximumWidth = maximumWidth
        self.maximumValues = maximumValues
    }

    /// `/set` envelopes and bridge requests: a handful of members, a `transaction` of modest shape.
    package static let commands = JSONLimits(maximumDepth: 32, maximumWidth: 256, maximumValues: 1024)
}

/// Why a payload is not valid JSON, with the byte offset where parsing stopped.
package struct JSONParseError: Error, Equatable, Sendable, CustomStringConvertible {
    /// What was expected or found.
    package let message: String
    /// Offset of the offending byte.
    package let offset: Int

    package var description: String { "invalid JSON at byte \(offset): \(message)" }
}
