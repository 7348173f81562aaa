internal import CDBus
import Glibc

/// The name of one changed property, compared in place (libdbus's bytes, valid only inside the visiting closure).
package struct DBusPropertyName {
    let pointer: UnsafePointer<CChar>

    /// Whether the name is `expected`, without making a String of it.
    package func `is`(_ expected: StaticString) -> Bool {
        expected.withUTF8Buffer { bytes in
            strncmp(pointer, UnsafeRawPointer(bytes.baseAddress!).assumingMemoryBound(to: CChar.self), bytes.count)
                == 0 && pointer[bytes.count] == 0
        }
    }
}

/// A changed property's value (the inside of its variant), read in place: each accessor returns nil when the value
/// has another type, or is larger than asked for, so hostile input is declined rather than trusted.
package struct DBusVariantReader {
    var iterator: DBusMessageIter

    /// An `n` value.
    package mutating func int16() -> Int16? {
        guard dbus_message_iter_get_arg_type(&iterator) == DBusTypeCode.int16 else { return nil }
        var value: Int16 = 0
        dbus_message_iter_get_basic(&iterator, &value)
        return value
    }

    /// An `a{qv}` whose variants all hold `ay`: at most `maxEntries` entries of at most `maxBytes` bytes each.
    ///
    /// When the value holds exactly the entries of `previous`, `previous` itself is returned: nothing is allocated,
    /// and comparing the result with it is a check of identity. bluetoothd repeats a device's data in every report
    /// while duplicates are on, so this is the common case.
    package mutating func uint16KeyedByteArrays(
        maxEntries: Int, maxBytes: Int, reusing previous: [UInt16: [UInt8]] = [:]
    ) -> [UInt16: [UInt8]]? {
        if !previous.isEmpty {
            let unchanged = holdsExactly(
                previous.count, keyType: DBusTypeCode.uint16, maxEntries: maxEntries, maxBytes: maxBytes
            ) { key in
                var id: UInt16 = 0
                dbus_message_iter_get_basic(&key, &id)
                return previous[id]
            }
            if unchanged { return previous }
        }
        var result: [UInt16: [UInt8]] = [:]
        let complete = Self.forEachEntry(&iterator, keyType: DBusTypeCode.uint16, maxEntries: maxEntries) {
            key, value in
            var id: UInt16 = 0
            dbus_message_iter_get_basic(&key, &id)
            guard let bytes = Self.bytes(inVariant: &value, maxBytes: maxBytes) else { return false }
            result[id] = Array(bytes)
            return true
        }
        return complete ? result : nil
    }

    /// An `a{sv}` whose variants all hold `ay`: at most `maxEntries` entries of at most `maxBytes` bytes each, and
    /// keys of at most `maxKeyLength` bytes.
    ///
    /// When the value holds exactly the entries of `previous`, `previous` itself is returned (see
    /// `uint16KeyedByteArrays`); otherwise a key equal to one of `previous` reuses its String.
    package mutating func stringKeyedByteArrays(
        maxEntries: Int, maxBytes: Int, maxKeyLength: Int, reusing previous: [String: [UInt8]] = [:]
    ) -> [String: [UInt8]]? {
        if !previous.isEmpty {
            let unchanged = holdsExactly(
                previous.count, keyType: DBusTypeCode.string, maxEntries: maxEntries, maxBytes: maxBytes
            ) { key in
                var name: UnsafePointer<CChar>?
                dbus_message_iter_get_basic(&key, &name)
                return name.flatMap { Self.entry(named: $0, in: previous)?.value }
            }
            if unchanged { return previous }
        }
        var result: [String: [UInt8]] = [:]
        let complete = Self.forEachEntry(&iterator, keyType: DBusTypeCode.string, maxEntries: maxEntries) {
            key, value in
            var name: UnsafePointer<CChar>?
            dbus_message_iter_get_basic(&key, &name)
            guard let name, strnlen(name, maxKeyLength + 1) <= maxKeyLength,
                let bytes = Self.bytes(inVariant: &value, maxBytes: maxBytes)
            else { return false }
            result[Self.entry(named: name, in: previous)?.key ?? String(cString: name)] = Array(bytes)
            return true
        }
        return complete ? result : nil
    }

    /// Whether the dictionary here (left unread: a copy of the iterator walks it) holds `count` entries, each with the
    /// bytes `known` gives for its key, and no other: then the previous result can be handed on as it is.
    private func holdsExactly(
        _ count: Int, keyType: Int32, maxEntries: Int, maxBytes: Int,
        _ known: (inout DBusMessageIter) -> [UInt8]?
    ) -> Bool {
        var probe = iterator
        var matched = 0
        let same = Self.forEachEntry(&probe, keyType: keyType, maxEntries: maxEntries) { key, value in
            guard let expected = known(&key), let bytes = Self.bytes(inVariant: &value, maxBytes: maxBytes),
                Self.equal(bytes, expected)
            else { return false }
            matched += 1
            return true
        }
        return same && matched == count
    }

    /// The entry of `dictionary` whose key is the C string `name` (a linear search: advertised data has a few
    /// entries at most).
    private static func entry(
        named name: UnsafePointer<CChar>, in dictionary: [String: [UInt8]]
    ) -> (key: String, value: [UInt8])? {
        for entry in dictionary where entry.key.withCString({ strcmp($0, name) == 0 }) { return entry }
        return nil
    }

    private static func equal(_ bytes: UnsafeRawBufferPointer, _ array: [UInt8]) -> Bool {
        guard bytes.count == array.count else { return false }
        guard let base = bytes.baseAddress else { return true }
        return array.withUnsafeBytes { memcmp(base, $0.baseAddress!, bytes.count) == 0 }
    }

    /// Visits the entries of a dictionary with keys of `keyType` and variant values; false when the value is
    /// something else, has more than `maxEntries` entries, or `body` declines one.
    private static func forEachEntry(
        _ iterator: inout DBusMessageIter, keyType: Int32, maxEntries: Int,
        _ body: (inout DBusMessageIter, inout DBusMessageIter) -> Bool
    ) -> Bool {
        guard dbus_message_iter_get_arg_type(&iterator) == DBusTypeCode.array,
            dbus_message_iter_get_element_type(&iterator) == DBusTypeCode.dictEntry
        else { return false }
        var entries = DBusMessageIter()
        dbus_message_iter_recurse(&iterator, &entries)
        var count = 0
        while dbus_message_iter_get_arg_type(&entries) == DBusTypeCode.dictEntry {
            count += 1
            guard count <= maxEntries else { return false }
            var key = DBusMessageIter()
            dbus_message_iter_recurse(&entries, &key)
            guard dbus_message_iter_get_arg_type(&key) == keyType else { return false }
            var value = key
            guard dbus_message_iter_next(&value) != 0, dbus_message_iter_get_arg_type(&value) == DBusTypeCode.variant,
                body(&key, &value)
            else { return false }
            dbus_message_iter_next(&entries)
        }
        return true
    }

    /// The bytes of a variant holding `ay`, at most `maxBytes` of them, in place in the message (valid while the
    /// message is).
    private static func bytes(inVariant variant: inout DBusMessageIter, maxBytes: Int) -> UnsafeRawBufferPointer? {
        var inner = DBusMessageIter()
        dbus_message_iter_recurse(&variant, &inner)
        guard dbus_message_iter_get_arg_type(&inner) == DBusTypeCode.array,
            dbus_message_iter_get_element_type(&inner) == DBusTypeCode.byte
        else { return nil }
        var bytes = DBusMessageIter()
        dbus_message_iter_recurse(&inner, &bytes)
        var base: UnsafeRawPointer?
        var count: Int32 = 0
        dbus_message_iter_get_fixed_array(&bytes, &base, &count)
        guard count <= maxBytes else { return nil }
        guard let base, count > 0 else { return UnsafeRawBufferPointer(start: nil, count: 0) }
        return UnsafeRawBufferPointer(start: base, count: Int(count))
    }
}

extension DBusSignalMessage {
    /// For `PropertiesChanged(interface, {name: <value>, …}, [])`: hands each changed property to `visit` in order,
    /// read in place. False when the signal has another shape (another interface, invalidated properties, extra
    /// arguments) or `visit` declines a property, so that the caller can leave the signal to the general path.
    ///
    /// No `DBusValue` is built: names are compared in place and only the values `visit` takes out are copied.
    package func visitChangedProperties(
        ofInterface interface: String, _ visit: (DBusPropertyName, inout DBusVariantReader) -> Bool
    ) -> Bool {
        var arguments = DBusMessageIter()
        guard dbus_message_iter_init(pointer, &arguments) != 0,
            dbus_message_iter_get_arg_type(&arguments) == DBusTypeCode.string
        else { return false }
        var name: UnsafePointer<CChar>?
        dbus_message_iter_get_basic(&arguments, &name)
        guard let name, interface.withCString({ strcmp(name, $0) == 0 }),
            dbus_message_iter_next(&arguments) != 0,
            dbus_message_iter_get_arg_type(&arguments) == DBusTypeCode.array,
            dbus_message_iter_get_element_type(&arguments) == DBusTypeCode.dictEntry
        else { return false }
        var entries = DBusMessageIter()
        dbus_message_iter_recurse(&arguments, &entries)
        // Then an empty list of invalidated properties, and nothing after it.
        guard dbus_message_iter_next(&arguments) != 0,
            dbus_message_iter_get_arg_type(&arguments) == DBusTypeCode.array,
            dbus_message_iter_get_element_type(&arguments) == DBusTypeCode.string,
            dbus_message_iter_get_element_count(&arguments) == 0,
            dbus_message_iter_next(&arguments) == 0
        else { return false }
        while dbus_message_iter_get_arg_type(&entries) == DBusTypeCode.dictEntry {
            var entry = DBusMessageIter()
            dbus_message_iter_recurse(&entries, &entry)
            guard dbus_message_iter_get_arg_type(&entry) == DBusTypeCode.string else { return false }
            var property: UnsafePointer<CChar>?
            dbus_message_iter_get_basic(&entry, &property)
            guard let property, dbus_message_iter_next(&entry) != 0,
                dbus_message_iter_get_arg_type(&entry) == DBusTypeCode.variant
            else { return false }
            var reader = DBusVariantReader(iterator: DBusMessageIter())
            dbus_message_iter_recurse(&entry, &reader.iterator)
            guard visit(DBusPropertyName(pointer: property), &reader) else { return false }
            dbus_message_iter_next(&entries)
        }
        return true
    }
}
