/// A dictionary by object path that remembers where it found each path lately.
///
/// The advertisement hot path looks its device up once per report. The tap hands on the same String for the same
/// path every time (see BlueZ's `DevicePathInterner`), so a path found before is found again by where its bytes
/// lie, without hashing them: a seeded hash of a forty-byte path and the comparison after it cost some 550
/// instructions, for every one of a thousand advertisers' reports. A remembered entry holds its String, so no other
/// string's bytes can lie at that address while it is remembered; a path the table did not see before, or one in
/// another String, is looked up by hashing as before. Every change of which paths the table holds forgets what was
/// remembered (a generation count, so forgetting costs nothing), as the indices are then no longer valid.
struct PathTable<Value> {
    typealias Index = Dictionary<String, Value>.Index

    private var values: [String: Value] = [:]
    /// Where paths were found, by the address of their bytes, in pairs of slots (an address may sit in either of its
    /// pair); a power of two long, about four times the paths held, at most `maxRemembered`. With one slot per address
    /// and twice the paths, a thousand advertisers' paths met another in their slot on a third of their reports, and
    /// two such paths took turns pushing each other out.
    private var remembered: [Remembered?] = []
    /// Bumped by every change of which paths the table holds: a remembered index of an older generation is stale.
    private var generation: UInt64 = 0

    fileprivate struct Remembered {
        var address: UInt
        var path: String
        var index: Index
        var generation: UInt64
    }

    static var maxRemembered: Int { 4_096 }

    /// Changed in place, as a dictionary's subscript is (a copy out and back would copy a value's storage on write).
    subscript(path: String) -> Value? {
        get { values[path] }
        _modify {
            generation &+= 1
            yield &values[path]
        }
    }

    @discardableResult
    mutating func removeValue(forKey path: String) -> Value? {
        generation &+= 1
        return values.removeValue(forKey: path)
    }

    /// Where `path` is, for `subscript(at:)`; valid until the table next gains or loses a path.
    mutating func index(of path: String) -> Index? {
        guard let address = Self.address(of: path) else { return values.index(forKey: path) }
        if remembered.count < Swift.min(values.count * 4, Self.maxRemembered) { makeRoom() }
        guard !remembered.isEmpty else { return values.index(forKey: path) }
        let slot = Int(truncatingIfNeeded: address >> 4) & (remembered.count - 1)
        let other = slot ^ 1
        if let entry = remembered[slot], entry.address == address, entry.generation == generation {
            return entry.index
        }
        if let entry = remembered[other], entry.address == address, entry.generation == generation {
            return entry.index
        }
        guard let index = values.index(forKey: path) else { return nil }
        // Into a free (or stale) slot of the pair; when both are taken, the one found first moves to the other.
        if let entry = remembered[slot], entry.generation == generation {
            if remembered[other]?.generation != generation { return remember(index, of: path, at: address, in: other) }
            remembered[other] = entry
        }
        return remember(index, of: path, at: address, in: slot)
    }

    private mutating func remember(_ index: Index, of path: String, at address: UInt, in slot: Int) -> Index {
        remembered[slot] = Remembered(address: address, path: path, index: index, generation: generation)
        return index
    }

    /// The value at `index`, changed in place: changing a value leaves every index valid.
    subscript(at index: Index) -> Value {
        get { values.values[index] }
        _modify { yield &values.values[index] }
    }

    /// Room for about four times the paths held, everything remembered so far forgotten.
    private mutating func makeRoom() {
        var count = 16
        while count < values.count * 4, count < Self.maxRemembered { count *= 2 }
        remembered = Array(repeating: nil, count: count)
    }

    /// Where a String's bytes lie, when that address is its own: a native string on the heap (or a literal in the
    /// binary) holds its bytes there for as long as it lives. A small string (up to 15 bytes) keeps them inline, and
    /// reading them in place gives the address of a temporary copy: nil then.
    private static func address(of path: String) -> UInt? {
        guard path.utf8.count > 15 else { return nil }
        return path.utf8.withContiguousStorageIfAvailable { UInt(bitPattern: $0.baseAddress) }
    }
}

extension PathTable: Sendable where Value: Sendable {}

extension PathTable.Remembered: Sendable where Value: Sendable {}
