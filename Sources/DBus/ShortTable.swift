/// A few values by key, kept as a list and found by comparing keys, without hashing. For the connection's tables of
/// one or two entries that are read on every message or wake-up (libdbus's watches, the owners of the well-known
/// names that rules name): a dictionary hashed the key on each read, with cold caches between two messages.
struct ShortTable<Key: Equatable, Value> {
    private var entries: [(key: Key, value: Value)] = []

    var isEmpty: Bool { entries.isEmpty }
    var keys: [Key] { entries.map(\.key) }

    subscript(key: Key) -> Value? {
        get { reading(key) { $0 } }
        set {
            let index = entries.firstIndex { $0.key == key }
            switch (index, newValue) {
            case (let index?, let value?): entries[index].value = value
            case (let index?, nil): entries.remove(at: index)
            case (nil, let value?): entries.append((key, value))
            case (nil, nil): break
            }
        }
    }

    /// `read` of the value for `key` where it lies, or nil when there is none: the subscript copies the entry out
    /// (its key and value retained and released), and the owner of a rule's sender is looked up for every signal.
    func reading<Result>(_ key: Key, _ read: (Value) -> Result) -> Result? {
        entries.withUnsafeBufferPointer { buffer in
            for index in buffer.indices where buffer[index].key == key { return read(buffer[index].value) }
            return nil
        }
    }

    @discardableResult
    mutating func removeValue(forKey key: Key) -> Value? {
        guard let index = entries.firstIndex(where: { $0.key == key }) else { return nil }
        return entries.remove(at: index).value
    }

    mutating func removeAll() { entries.removeAll() }
}
