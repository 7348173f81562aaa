/// Decodes one mapping of the configuration file without stopping at the first problem.
///
/// Every field is read as optional; a value of the wrong type is recorded (with its path) in the
/// ``ConfigurationDecodingContext`` and read as absent, and keys the section does not know are recorded
/// as errors too, so that typos never pass silently.
struct FileSectionReader<Key: CodingKey & CaseIterable> {
    private let container: KeyedDecodingContainer<Key>
    private let context: ConfigurationDecodingContext

    init(_ decoder: any Decoder, keys: Key.Type) throws {
        context = ConfigurationDecodingContext.current(in: decoder)
        let everything = try decoder.container(keyedBy: AnyCodingKey.self)
        let known = Key.allCases.map(\.stringValue)
        for key in everything.allKeys where Key(stringValue: key.stringValue) == nil {
            var message = "unknown key"
            if let suggestion = Self.closest(to: key.stringValue, among: known) {
                message += " (did you mean \"\(suggestion)\"?)"
            }
            context.record(path: decoder.codingPath + [key], message: message)
        }
        container = try decoder.container(keyedBy: Key.self)
    }

    /// The value at `key`, or nil when absent, null or of the wrong type (the last one is recorded).
    func callAsFunction<Value: Decodable>(_ key: Key) -> Value? {
        do {
            return try container.decodeIfPresent(Value.self, forKey: key)
        } catch {
            context.record(error, at: container.codingPath + [key], expecting: Value.self)
            return nil
        }
    }

    /// A known key within edit distance 2, to suggest for a typo.
    private static func closest(to key: String, among known: [String]) -> String? {
        known.map { ($0, EditDistance.between(key, $0)) }.filter { $0.1 <= 2 }.min(by: { $0.1 < $1.1 })?.0
    }
}

/// A coding key for any mapping key, used to list the keys a section does not know.
struct AnyCodingKey: CodingKey {
    let stringValue: String
    let intValue: Int?

    init(stringValue: String) {
        self.stringValue = stringValue
        intValue = nil
    }

    init(intValue: Int) {
        stringValue = String(intValue)
        self.intValue = intValue
    }
}

/// Levenshtein distance for "did you mean" suggestions; keys are short, so the quadratic cost is irrelevant.
enum EditDistance {
    static func between(_ a: String, _ b: String) -> Int {
        let a = Array(a.utf8)
        let b = Array(b.utf8)
        var previous = Array(0...b.count)
        for (i, x) in a.enumerated() {
            var current = [i + 1]
            for (j, y) in b.enumerated() {
                current.append(Swift.min(previous[j + 1] + 1, current[j] + 1, previous[j] + (x == y ? 0 : 1)))
            }
            previous = current
        }
        return previous[b.count]
    }
}
