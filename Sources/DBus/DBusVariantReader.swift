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

    /// Hands each entry of an `a{qv}` whose variants all hold `ay` to `body`, its bytes in place: at most
    /// `maxEntries` entries of at most `maxBytes` bytes each. False when the value is anything else or `body`
    /// declines an entry; then the value is not consumed (where the read stopped is unspecified).
    ///
    /// The caller keeps what it needs of each entry: bluetoothd repeats a device's data in every report while
    /// duplicates are on, and one that equals what the caller holds needs nothing new (a copy of this reader, read
    /// first, can tell before anything is made).
    package mutating func forEachUInt16KeyedByteArray(
        maxEntries: Int, maxBytes: Int, _ body: (UInt16, UnsafeRawBufferPointer) -> Bool
    ) -> Bool {
        consumed = Self.forEachEntry(
            &cursor, signature: "a{qv}", maxEntries: maxEntries, maxBytes: maxBytes, key: { $0.uint16() },
            body: body)
        return consumed
    }

    /// As `forEachUInt16KeyedByteArray`, for an `a{sv}`: each key handed over as its UTF-8 in place, at most
    /// `maxKeyLength` bytes.
    package mutating func forEachStringKeyedByteArray(
        maxEntries: Int, maxBytes: Int, maxKeyLength: Int,
        _ body: (UnsafeRawBufferPointer, UnsafeRawBufferPointer) -> Bool
    ) -> Bool {
        consumed = Self.forEachEntry(
            &cursor, signature: "a{sv}", maxEntries: maxEntries, maxBytes: maxBytes,
            key: { cursor in
                guard let name = cursor.string(), name.count <= maxKeyLength else { return nil }
                return name
            },
            body: body)
        return consumed
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
