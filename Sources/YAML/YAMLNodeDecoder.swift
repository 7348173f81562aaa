/// The `Decoder` over one node; it is also the node's single-value container.
///
/// ``YAMLDecoder`` documents the scalar rules applied here.
struct YAMLNodeDecoder: Decoder, SingleValueDecodingContainer {
    let node: YAMLNode
    let codingPath: [any CodingKey]
    let userInfo: [CodingUserInfoKey: Any]

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        guard case .mapping(let entries) = node.content else {
            throw mismatch([String: Any].self, expected: "a mapping")
        }
        return KeyedDecodingContainer(YAMLKeyedContainer<Key>(decoder: self, entries: entries))
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        guard case .sequence(let items) = node.content else { throw mismatch([Any].self, expected: "a sequence") }
        return YAMLUnkeyedContainer(decoder: self, items: items)
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer { self }

    /// The decoder of `child`, one key or index further down.
    func child(_ child: YAMLNode, at key: any CodingKey) -> YAMLNodeDecoder {
        YAMLNodeDecoder(node: child, codingPath: codingPath + [key], userInfo: userInfo)
    }

    func decodeValue<Value: Decodable>(_ type: Value.Type) throws -> Value {
        try Value(from: self)
    }

    // MARK: Single value

    func decodeNil() -> Bool { node.isNull }

    func decode(_ type: Bool.Type) throws -> Bool {
        try resolve(type, expected: "true or false", YAMLScalarRules.bool)
    }

    func decode(_ type: String.Type) throws -> String {
        try resolve(type, expected: "a string", allowsQuoted: true) { $0 }
    }

    func decode(_ type: Double.Type) throws -> Double { try floatingPoint(type) }
    func decode(_ type: Float.Type) throws -> Float { try floatingPoint(type) }
    func decode(_ type: Int.Type) throws -> Int { try integer(type) }
    func decode(_ type: Int8.Type) throws -> Int8 { try integer(type) }
    func decode(_ type: Int16.Type) throws -> Int16 { try integer(type) }
    func decode(_ type: Int32.Type) throws -> Int32 { try integer(type) }
    func decode(_ type: Int64.Type) throws -> Int64 { try integer(type) }
    func decode(_ type: UInt.Type) throws -> UInt { try integer(type) }
    func decode(_ type: UInt8.Type) throws -> UInt8 { try integer(type) }
    func decode(_ type: UInt16.Type) throws -> UInt16 { try integer(type) }
    func decode(_ type: UInt32.Type) throws -> UInt32 { try integer(type) }
    func decode(_ type: UInt64.Type) throws -> UInt64 { try integer(type) }
    func decode<Value: Decodable>(_ type: Value.Type) throws -> Value { try decodeValue(type) }

    private func integer<Integer: FixedWidthInteger>(_ type: Integer.Type) throws -> Integer {
        try resolve(type, expected: "an integer that fits \(type)") { YAMLScalarRules.integer($0, as: type) }
    }

    private func floatingPoint<Number: BinaryFloatingPoint & LosslessStringConvertible>(
        _ type: Number.Type
    ) throws -> Number {
        try resolve(type, expected: "a number that fits \(type)") { YAMLScalarRules.floatingPoint($0, as: type) }
    }

    /// Reads a scalar by `rule`: null is `valueNotFound`, anything else the rule refuses is `typeMismatch`.
    /// Only plain scalars go through the rule unless `allowsQuoted`: quoted text is never a number or a boolean.
    private func resolve<Value>(
        _ type: Value.Type, expected: String, allowsQuoted: Bool = false, _ rule: (String) -> Value?
    ) throws -> Value {
        if node.isNull {
            throw DecodingError.valueNotFound(
                type, DecodingError.Context(codingPath: codingPath, debugDescription: found(expected: expected)))
        }
        guard case .scalar(let text, let style) = node.content, allowsQuoted || style == .plain,
            let value = rule(text)
        else {
            throw mismatch(type, expected: expected)
        }
        return value
    }

    func mismatch(_ type: Any.Type, expected: String) -> DecodingError {
        let context = DecodingError.Context(codingPath: codingPath, debugDescription: found(expected: expected))
        return node.isNull ? .valueNotFound(type, context) : .typeMismatch(type, context)
    }

    private func found(expected: String) -> String {
        let quoted: String
        if case .scalar(_, let style) = node.content, style != .plain {
            quoted = style == .quoted ? "quoted " : "block "
        } else {
            quoted = ""
        }
        return "expected \(expected), found \(quoted)\(node.kindDescription) at \(node.mark)"
    }
}

/// The key of a sequence item in a `codingPath`.
struct YAMLIndexKey: CodingKey {
    let intValue: Int?
    var stringValue: String { "Index \(intValue ?? 0)" }

    init(intValue: Int) { self.intValue = intValue }
    init?(stringValue: String) { nil }
}

/// The key of `superDecoder()`, as `Encoder`s conventionally name it.
struct YAMLSuperKey: CodingKey {
    var stringValue: String { "super" }
    var intValue: Int? { nil }

    init() {}
    init?(stringValue: String) {
        guard stringValue == "super" else { return nil }
    }
    init?(intValue: Int) { nil }
}
