/// Advertised data as bluetoothd reports it: bytes under a key, each key once (a service UUID's text for
/// ServiceData, a company identifier for ManufacturerData).
///
/// Not a Dictionary: an advertisement carries one entry nearly always, and a dictionary made for each report
/// allocated its table and hashed its key (for service data a 36-byte UUID text), some 1,400 instructions of the
/// 20,000 a report costs among 1,000 sensors. The first entry is held inline and any others in a list searched key
/// by key (an advertisement has room for a few at most); nothing is allocated but the entries' bytes.
///
/// What other modules call for each report is specialized here for both kinds of key and exported: a generic
/// method called from another module otherwise runs unspecialized, asking the runtime for type metadata each time.
package struct AdvertisedEntries<Key: Hashable & Sendable>: Sendable {
    package typealias Element = (key: Key, value: [UInt8])

    /// The first entry; nil only when there are none (`rest` is then empty too).
    private var head: Element?
    private var rest: [Element] = []

    @_specialize(exported:true,where Key == String)
    @_specialize(exported:true,where Key == UInt16)
    package init() {}

    /// The entries in order; a repeated key keeps its last bytes, as bluetoothd keeps one entry per key.
    package init(_ entries: some Sequence<(Key, [UInt8])>) {
        for (key, value) in entries { self[key] = value }
    }

    /// How many keys carry data.
    package var count: Int {
        @_specialize(exported:true,where Key == String)
        @_specialize(exported:true,where Key == UInt16)
        get { head == nil ? 0 : 1 + rest.count }
    }

    package var isEmpty: Bool {
        @_specialize(exported:true,where Key == String)
        @_specialize(exported:true,where Key == UInt16)
        get { head == nil }
    }

    /// The first entry added (of the ones still held): the one entry of nearly every advertisement.
    package var first: Element? {
        @_specialize(exported:true,where Key == String)
        @_specialize(exported:true,where Key == UInt16)
        get { head }
    }

    /// The keys, in the order they were added.
    package var keys: [Key] { map(\.key) }

    /// Calls `body` with each key in the order they were added, read in place: iterating copies each entry out.
    @_specialize(exported:true,where Key == String)
    @_specialize(exported:true,where Key == UInt16)
    package func forEachKey(_ body: (Key) -> Void) {
        if let head { body(head.key) }
        rest.withUnsafeBufferPointer { entries in
            for index in entries.indices { body(entries[index].key) }
        }
    }

    /// The bytes under `key`; setting nil removes it, setting another value replaces it in its place.
    package subscript(key: Key) -> [UInt8]? {
        get {
            if let head, head.key == key { return head.value }
            for entry in rest where entry.key == key { return entry.value }
            return nil
        }
        set {
            if let newValue {
                set(newValue, for: key)
            } else {
                remove(key)
            }
        }
    }

    /// How many bytes `key` carries, read in place; nil when it carries none. What a decoder's `recognizes` asks:
    /// the bytes themselves, returned, are retained and released for each format tried.
    @_specialize(exported:true,where Key == String)
    @_specialize(exported:true,where Key == UInt16)
    package func dataCount(of key: Key) -> Int? {
        if let head, head.key == key { return head.value.count }
        for entry in rest where entry.key == key { return entry.value.count }
        return nil
    }

    /// Whether both hold the same keys with the same bytes, in whatever order they came; what `==` answers. One
    /// entry each, the common case, is one comparison of keys and one `memcmp`.
    package func hasSameEntries(as other: Self) -> Bool {
        guard count == other.count else { return false }
        guard let head else { return true }
        if rest.isEmpty, let theirs = other.head {
            return head.key == theirs.key && head.value.hasSameBytes(as: theirs.value)
        }
        return allSatisfy { entry in
            guard let theirs = other[entry.key] else { return false }
            return entry.value.hasSameBytes(as: theirs)
        }
    }

    private mutating func set(_ value: [UInt8], for key: Key) {
        guard let held = head else {
            head = (key, value)
            return
        }
        if held.key == key {
            head = (key, value)
        } else if let index = rest.firstIndex(where: { $0.key == key }) {
            rest[index].value = value
        } else {
            rest.append((key, value))
        }
    }

    private mutating func remove(_ key: Key) {
        guard let held = head else { return }
        if held.key == key {
            head = rest.isEmpty ? nil : rest.removeFirst()
        } else if let index = rest.firstIndex(where: { $0.key == key }) {
            rest.remove(at: index)
        }
    }
}

extension AdvertisedEntries: Sequence {
    package struct Iterator: IteratorProtocol {
        private let entries: AdvertisedEntries
        private var index = 0

        fileprivate init(_ entries: AdvertisedEntries) {
            self.entries = entries
        }

        @_specialize(exported:true,where Key == String)
        @_specialize(exported:true,where Key == UInt16)
        package mutating func next() -> Element? {
            defer { index += 1 }
            if index == 0 { return entries.head }
            return index <= entries.rest.count ? entries.rest[index - 1] : nil
        }
    }

    @_specialize(exported:true,where Key == String)
    @_specialize(exported:true,where Key == UInt16)
    package func makeIterator() -> Iterator { Iterator(self) }

    package var underestimatedCount: Int { count }
}

extension AdvertisedEntries: ExpressibleByDictionaryLiteral {
    package init(dictionaryLiteral elements: (Key, [UInt8])...) { self.init(elements) }
}

extension AdvertisedEntries: Equatable, Hashable {
    package static func == (lhs: Self, rhs: Self) -> Bool { lhs.hasSameEntries(as: rhs) }

    /// Independent of the entries' order, as `==` is.
    package func hash(into hasher: inout Hasher) {
        var entries = 0
        for entry in self {
            var one = Hasher()
            one.combine(entry.key)
            one.combine(entry.value)
            entries ^= one.finalize()
        }
        hasher.combine(count)
        hasher.combine(entries)
    }
}

extension AdvertisedEntries: CustomStringConvertible {
    /// As a dictionary's: `["0000fcd2-…": [64, 2]]`.
    package var description: String {
        isEmpty ? "[:]" : "[" + map { "\(String(reflecting: $0.key)): \($0.value)" }.joined(separator: ", ") + "]"
    }
}

// The reads and writes of the advertisement hot path, for the two kinds of key bluetoothd uses: concrete, since a
// generic method called from another module runs unspecialized. They answer the question asked (does this key carry
// these bytes, which key is this) rather than hand out an entry for the caller to pick apart.
extension AdvertisedEntries where Key == String {
    /// Whether the key whose UTF-8 is `key` carries exactly `bytes`.
    package func holds(utf8 key: UnsafeRawBufferPointer, bytes: UnsafeRawBufferPointer) -> Bool {
        if let head, head.key.hasUTF8(key) { return head.value.hasSameBytes(as: bytes) }
        for entry in rest where entry.key.hasUTF8(key) { return entry.value.hasSameBytes(as: bytes) }
        return false
    }

    /// The key whose UTF-8 is `bytes`, when there is one.
    package func key(utf8 bytes: UnsafeRawBufferPointer) -> String? {
        if let head, head.key.hasUTF8(bytes) { return head.key }
        for entry in rest where entry.key.hasUTF8(bytes) { return entry.key }
        return nil
    }

    /// Sets a copy of `bytes` under `key`.
    package mutating func set(_ bytes: UnsafeRawBufferPointer, for key: String) { set([UInt8](bytes), for: key) }
}

extension AdvertisedEntries where Key == UInt16 {
    /// Whether `key` carries exactly `bytes`.
    package func holds(_ key: UInt16, bytes: UnsafeRawBufferPointer) -> Bool {
        if let head, head.key == key { return head.value.hasSameBytes(as: bytes) }
        for entry in rest where entry.key == key { return entry.value.hasSameBytes(as: bytes) }
        return false
    }

    /// The bytes under `key`.
    package func value(for key: UInt16) -> [UInt8]? {
        if let head, head.key == key { return head.value }
        for entry in rest where entry.key == key { return entry.value }
        return nil
    }

    /// Sets a copy of `bytes` under `key`.
    package mutating func set(_ bytes: UnsafeRawBufferPointer, for key: UInt16) { set([UInt8](bytes), for: key) }
}
