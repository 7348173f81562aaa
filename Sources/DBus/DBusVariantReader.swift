import Glibc

/// A changed property's value (a variant: its signature, then the value), read in place from the marshalled
/// message: each accessor returns nil when the value has another type, or is larger than asked for, so hostile input
/// is declined rather than trusted. An accessor that returns a value has read the whole variant.
package struct DBusVariantReader {
    var cursor: DBusWireCursor
    /// Whether an accessor read the value (the next property starts after it).
    private(set) var consumed = false

    init(cursor: DBusWireCursor) {
        self.cursor = cursor
    }

    /// Where the next read starts, counted from the start of the bytes being read (the body, when it is read in
    /// place): after `int16()`, the value lies in the 2 bytes before it.
    package var offset: Int { cursor.offset }

    /// An `n` value.
    package mutating func int16() -> Int16? {
        guard cursor.signature(is: "n"), let raw = cursor.uint16() else { return nil }
        consumed = true
        return Int16(bitPattern: raw)
    }

    /// An `ay` value, copied: at most `maxCount` bytes.
    package mutating func byteArray(maxCount: Int = DBusWireFrame.maxArrayLength) -> [UInt8]? {
        guard cursor.signature(is: "ay"), let bytes = cursor.byteArray(maxCount: maxCount) else { return nil }
        consumed = true
        return Array(bytes)
    }

    /// An `a{qv}` whose variants all hold `ay`: at most `maxEntries` entries of at most `maxBytes` bytes each.
    ///
    /// When the value holds exactly the entries of `previous`, `previous` itself is returned: nothing is allocated,
    /// and comparing the result with it is a check of identity. bluetoothd repeats a device's data in every report
    /// while duplicates are on, so this is the common case.
    package mutating func uint16KeyedByteArrays(
        maxEntries: Int, maxBytes: Int, reusing previous: [UInt16: [UInt8]] = [:]
    ) -> [UInt16: [UInt8]]? {
        byteArrays(
            signature: "a{qv}", maxEntries: maxEntries, maxBytes: maxBytes, previous: previous,
            readKey: { $0.uint16() }, known: { id in previous[id].map { (id, $0) } }, makeKey: { $0 })
    }

    /// An `a{sv}` whose variants all hold `ay`: at most `maxEntries` entries of at most `maxBytes` bytes each, and
    /// keys of at most `maxKeyLength` bytes.
    ///
    /// When the value holds exactly the entries of `previous`, `previous` itself is returned (see
    /// `uint16KeyedByteArrays`); otherwise a key equal to one of `previous` reuses its String, and any other is
    /// made by `makeKey` (which may hand out a String it keeps) from its UTF-8.
    package mutating func stringKeyedByteArrays(
        maxEntries: Int, maxBytes: Int, maxKeyLength: Int, reusing previous: [String: [UInt8]] = [:],
        makeKey: (UnsafeRawBufferPointer) -> String = { String(decoding: $0, as: UTF8.self) }
    ) -> [String: [UInt8]]? {
        byteArrays(
            signature: "a{sv}", maxEntries: maxEntries, maxBytes: maxBytes, previous: previous,
            readKey: { cursor in
                guard let name = cursor.string(), name.count <= maxKeyLength else { return nil }
                return name
            },
            known: { Self.entry(named: $0, in: previous) },
            makeKey: makeKey)
    }

    /// A dictionary of `signature` whose variants all hold `ay`, as `previous` itself when it holds exactly its
    /// entries (`known` finds an entry of `previous` by the key as read), else made anew (`makeKey`).
    private mutating func byteArrays<RawKey, Key: Hashable>(
        signature: StaticString, maxEntries: Int, maxBytes: Int, previous: [Key: [UInt8]],
        readKey: (inout DBusWireCursor) -> RawKey?, known: (RawKey) -> (key: Key, value: [UInt8])?,
        makeKey: (RawKey) -> Key
    ) -> [Key: [UInt8]]? {
        if !previous.isEmpty {
            var probe = cursor
            var matched = 0
            let same = Self.forEachEntry(
                &probe, signature: signature, maxEntries: maxEntries, maxBytes: maxBytes, key: readKey,
                body: { key, bytes in
                    guard let entry = known(key), DBusWireCursor.equal(bytes, entry.value) else { return false }
                    matched += 1
                    return true
                })
            if same && matched == previous.count {
                cursor = probe
                consumed = true
                return previous
            }
        }
        var result: [Key: [UInt8]] = [:]
        let complete = Self.forEachEntry(
            &cursor, signature: signature, maxEntries: maxEntries, maxBytes: maxBytes, key: readKey,
            body: { key, bytes in
                result[known(key)?.key ?? makeKey(key)] = Array(bytes)
                return true
            })
        consumed = complete
        return complete ? result : nil
    }

    /// The entry of `dictionary` whose key has the bytes `name` (a linear search: advertised data has a few entries
    /// at most).
    private static func entry(
        named name: UnsafeRawBufferPointer, in dictionary: [String: [UInt8]]
    ) -> (key: String, value: [UInt8])? {
        for entry in dictionary where DBusWireCursor.equal(name, entry.key) { return entry }
        return nil
    }

    /// Visits the entries of a variant holding a dictionary of `signature` (`a{?v}`) whose values are variants
    /// holding `ay`; false when the value is something else, has more than `maxEntries` entries or an array longer
    /// than `maxBytes`, or `body` declines one. Each array's bytes are handed over in place.
    private static func forEachEntry<Key>(
        _ cursor: inout DBusWireCursor, signature: StaticString, maxEntries: Int, maxBytes: Int,
        key readKey: (inout DBusWireCursor) -> Key?, body: (Key, UnsafeRawBufferPointer) -> Bool
    ) -> Bool {
        guard cursor.signature(is: signature), let entriesEnd = cursor.enterArray(elementAlignment: 8) else {
            return false
        }
        let outer = cursor.narrow(to: entriesEnd)
        var count = 0
        while cursor.offset < entriesEnd {
            count += 1
            guard count <= maxEntries, cursor.align(8), let key = readKey(&cursor), cursor.signature(is: "ay"),
                let bytes = cursor.byteArray(maxCount: maxBytes), body(key, bytes)
            else { return false }
        }
        cursor.restore(end: outer)
        return true
    }
}
