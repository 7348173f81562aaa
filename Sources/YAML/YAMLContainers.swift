/// A mapping read by key. Keys are unique (the composer refuses duplicates), so a dictionary finds them.
struct YAMLKeyedContainer<Key: CodingKey>: KeyedDecodingContainerProtocol {
    let decoder: YAMLNodeDecoder
    private let entries: [YAMLMappingEntry]
    private let valuesByKey: [String: YAMLNode]

    init(decoder: YAMLNodeDecoder, entries: [YAMLMappingEntry]) {
        self.decoder = decoder
        self.entries = entries
        valuesByKey = Dictionary(entries.map { ($0.name, $0.value) }, uniquingKeysWith: { first, _ in first })
    }

    var codingPath: [any CodingKey] { decoder.codingPath }

    /// The keys `Key` can represent, in the order written.
    var allKeys: [Key] { entries.compactMap { Key(stringValue: $0.name) } }

    func contains(_ key: Key) -> Bool { valuesByKey[key.stringValue] != nil }

    private func childDecoder(_ key: Key) throws -> YAMLNodeDecoder {
        guard let value = valuesByKey[key.stringValue] else {
            throw DecodingError.keyNotFound(
                key,
                DecodingError.Context(
                    codingPath: codingPath,
                    debugDescription: "no key \"\(key.stringValue)\" in the mapping at \(decoder.node.mark)"))
        }
        return decoder.child(value, at: key)
    }

    private func value<Value: Decodable>(_ type: Value.Type, _ key: Key) throws -> Value {
        try childDecoder(key).decodeValue(type)
    }

    func decodeNil(forKey key: Key) throws -> Bool { try childDecoder(key).decodeNil() }
    func decode(_ type: Bool.Type, forKey key: Key) throws -> Bool { try value(type, key) }
    func decode(_ type: String.Type, forKey key: Key) throws -> String { try value(type, key) }
    func decode(_ type: Double.Type, forKey key: Key) throws -> Double { try value(type, key) }
    func decode(_ type: Float.Type, forKey key: Key) throws -> Float { try value(type, key) }
    func decode(_ type: Int.Type, forKey key: Key) throws -> Int { try value(type, key) }
    func decode(_ type: Int8.Type, forKey key: Key) throws -> Int8 { try value(type, key) }
    func decode(_ type: Int16.Type, forKey key: Key) throws -> Int16 { try value(type, key) }
    func decode(_ type: Int32.Type, forKey key: Key) throws -> Int32 { try value(type, key) }
    func decode(_ type: Int64.Type, forKey key: Key) throws -> Int64 { try value(type, key) }
    func decode(_ type: UInt.Type, forKey key: Key) throws -> UInt { try value(type, key) }
    func decode(_ type: UInt8.Type, forKey key: Key) throws -> UInt8 { try value(type, key) }
    func decode(_ type: UInt16.Type, forKey key: Key) throws -> UInt16 { try value(type, key) }
    func decode(_ type: UInt32.Type, forKey key: Key) throws -> UInt32 { try value(type, key) }
    func decode(_ type: UInt64.Type, forKey key: Key) throws -> UInt64 { try value(type, key) }
    func decode<Value: Decodable>(_ type: Value.Type, forKey key: Key) throws -> Value { try value(type, key) }

    func nestedContainer<NestedKey: CodingKey>(
        keyedBy type: NestedKey.Type, forKey key: Key
    ) throws -> KeyedDecodingContainer<NestedKey> {
        try childDecoder(key).container(keyedBy: type)
    }

    func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
        try childDecoder(key).unkeyedContainer()
    }

    /// The value of key `super`, or a null one when the mapping has none (the convention of Foundation's coders).
    func superDecoder() throws -> any Decoder {
        superDecoder(named: YAMLSuperKey(), value: valuesByKey["super"])
    }

    func superDecoder(forKey key: Key) throws -> any Decoder {
        superDecoder(named: key, value: valuesByKey[key.stringValue])
    }

    private func superDecoder(named key: any CodingKey, value: YAMLNode?) -> any Decoder {
        decoder.child(value ?? YAMLNode(.scalar("", .plain), at: decoder.node.mark), at: key)
    }
}

/// A sequence read item by item.
struct YAMLUnkeyedContainer: UnkeyedDecodingContainer {
    let decoder: YAMLNodeDecoder
    private let items: [YAMLNode]
    private(set) var currentIndex = 0

    init(decoder: YAMLNodeDecoder, items: [YAMLNode]) {
        self.decoder = decoder
        self.items = items
    }

    var codingPath: [any CodingKey] { decoder.codingPath }
    var count: Int? { items.count }
    var isAtEnd: Bool { currentIndex >= items.count }

    /// The decoder of the current item; the index moves on only once the item decoded.
    private func currentDecoder(_ type: Any.Type) throws -> YAMLNodeDecoder {
        guard !isAtEnd else {
            throw DecodingError.valueNotFound(
                type,
                DecodingError.Context(
                    codingPath: codingPath + [YAMLIndexKey(intValue: currentIndex)],
                    debugDescription:
                        "the sequence at \(decoder.node.mark) has only \(items.count) items"))
        }
        return decoder.child(items[currentIndex], at: YAMLIndexKey(intValue: currentIndex))
    }

    /// Reads the current item with `read`; `type` is what an error says was expected.
    private mutating func next<Value>(_ type: Any.Type, _ read: (YAMLNodeDecoder) throws -> Value) throws -> Value {
        let value = try read(currentDecoder(type))
        currentIndex += 1
        return value
    }

    private mutating func value<Value: Decodable>(_ type: Value.Type) throws -> Value {
        try next(type) { try $0.decodeValue(type) }
    }

    mutating func decodeNil() throws -> Bool {
        guard try currentDecoder(Any?.self).decodeNil() else { return false }
        currentIndex += 1
        return true
    }

    mutating func decode(_ type: Bool.Type) throws -> Bool { try value(type) }
    mutating func decode(_ type: String.Type) throws -> String { try value(type) }
    mutating func decode(_ type: Double.Type) throws -> Double { try value(type) }
    mutating func decode(_ type: Float.Type) throws -> Float { try value(type) }
    mutating func decode(_ type: Int.Type) throws -> Int { try value(type) }
    mutating func decode(_ type: Int8.Type) throws -> Int8 { try value(type) }
    mutating func decode(_ type: Int16.Type) throws -> Int16 { try value(type) }
    mutating func decode(_ type: Int32.Type) throws -> Int32 { try value(type) }
    mutating func decode(_ type: Int64.Type) throws -> Int64 { try value(type) }
    mutating func decode(_ type: UInt.Type) throws -> UInt { try value(type) }
    mutating func decode(_ type: UInt8.Type) throws -> UInt8 { try value(type) }
    mutating func decode(_ type: UInt16.Type) throws -> UInt16 { try value(type) }
    mutating func decode(_ type: UInt32.Type) throws -> UInt32 { try value(type) }
    mutating func decode(_ type: UInt64.Type) throws -> UInt64 { try value(type) }
    mutating func decode<Value: Decodable>(_ type: Value.Type) throws -> Value { try value(type) }

    mutating func nestedContainer<NestedKey: CodingKey>(
        keyedBy type: NestedKey.Type
    ) throws -> KeyedDecodingContainer<NestedKey> {
        try next([String: Any].self) { try $0.container(keyedBy: type) }
    }

    mutating func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer {
        try next([Any].self) { try $0.unkeyedContainer() }
    }

    mutating func superDecoder() throws -> any Decoder {
        try next((any Decoder).self) { $0 }
    }
}
