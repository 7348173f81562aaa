/// A dictionary by object path that remembers where it found a path last.
///
/// The advertisement hot path looks its device up once per report, and with duplicates on most reports come from
/// the device of the report before: a repeated path compares equal at once (the tap hands on the same String), where
/// `index(forKey:)` hashed it every time, with cold caches between two reports. Every change of which paths the
/// table holds forgets the remembered index, which is then no longer valid.
struct PathTable<Value> {
    typealias Index = Dictionary<String, Value>.Index

    private var values: [String: Value] = [:]
    private var lastFound: (path: String, index: Index)?

    /// Changed in place, as a dictionary's subscript is (a copy out and back would copy a value's storage on write).
    subscript(path: String) -> Value? {
        get { values[path] }
        _modify {
            lastFound = nil
            yield &values[path]
        }
    }

    @discardableResult
    mutating func removeValue(forKey path: String) -> Value? {
        lastFound = nil
        return values.removeValue(forKey: path)
    }

    /// Where `path` is, for `subscript(at:)`; valid until the table next gains or loses a path.
    mutating func index(of path: String) -> Index? {
        if let lastFound, lastFound.path == path { return lastFound.index }
        guard let index = values.index(forKey: path) else { return nil }
        lastFound = (path, index)
        return index
    }

    /// The value at `index`, changed in place: changing a value leaves every index valid.
    subscript(at index: Index) -> Value {
        get { values.values[index] }
        _modify { yield &values.values[index] }
    }
}

extension PathTable: Sendable where Value: Sendable {}
