/// Builders and accessors that keep code speaking to D-Bus services (such as BlueZ) short.
///
/// Accessors look through variants, so `properties["RSSI"]?.int16` works on an `a{sv}` value directly.
extension DBusValue {
    /// `ay` from bytes.
    package static func bytes(_ bytes: [UInt8]) -> DBusValue { .byteArray(bytes) }

    /// `as` from strings.
    package static func stringArray(_ strings: [String]) -> DBusValue {
        .array(elementSignature: "s", strings.map { .string($0) })
    }

    /// `ao` from object paths.
    package static func objectPathArray(_ paths: [String]) -> DBusValue {
        .array(elementSignature: "o", paths.map { .objectPath($0) })
    }

    /// `a{sv}`: each value is wrapped in a variant; keys are sorted so the encoding is deterministic.
    package static func stringVariantDictionary(_ dictionary: [String: DBusValue]) -> DBusValue {
        .dictionary(
            keySignature: "s", valueSignature: "v",
            dictionary.keys.sorted().map { DBusDictEntry(key: .string($0), value: .variant(dictionary[$0]!)) }
        )
    }

    /// `a{qv}` (BlueZ `ManufacturerData`): each value is wrapped in a variant, keys sorted.
    package static func uint16VariantDictionary(_ dictionary: [UInt16: DBusValue]) -> DBusValue {
        .dictionary(
            keySignature: "q", valueSignature: "v",
            dictionary.keys.sorted().map { DBusDictEntry(key: .uint16($0), value: .variant(dictionary[$0]!)) }
        )
    }

    /// The value inside any number of variants.
    package var variantValue: DBusValue {
        var value = self
        while case .variant(let inner) = value { value = inner }
        return value
    }

    /// `s`, `o` or `g` as a string.
    package var string: String? {
        switch variantValue {
        case .string(let s), .objectPath(let s), .signature(let s): s
        default: nil
        }
    }

    package var objectPath: String? {
        if case .objectPath(let s) = variantValue { s } else { nil }
    }

    package var bool: Bool? {
        if case .bool(let v) = variantValue { v } else { nil }
    }

    package var byte: UInt8? {
        if case .byte(let v) = variantValue { v } else { nil }
    }

    package var int16: Int16? {
        if case .int16(let v) = variantValue { v } else { nil }
    }

    package var uint16: UInt16? {
        if case .uint16(let v) = variantValue { v } else { nil }
    }

    package var int32: Int32? {
        if case .int32(let v) = variantValue { v } else { nil }
    }

    package var uint32: UInt32? {
        if case .uint32(let v) = variantValue { v } else { nil }
    }

    package var int64: Int64? {
        if case .int64(let v) = variantValue { v } else { nil }
    }

    package var uint64: UInt64? {
        if case .uint64(let v) = variantValue { v } else { nil }
    }

    package var double: Double? {
        if case .double(let v) = variantValue { v } else { nil }
    }

    package var fileDescriptor: DBusFileDescriptor? {
        if case .unixFD(let v) = variantValue { v } else { nil }
    }

    /// Bytes from `ay` (also from an `.array` of `.byte`).
    package var bytes: [UInt8]? {
        switch variantValue {
        case .byteArray(let b): return b
        case .array("y", let values): return values.compactMap(\.byte)
        default: return nil
        }
    }

    /// The elements of an array (bytes become `.byte` values; dictionaries are not arrays here).
    package var arrayElements: [DBusValue]? {
        switch variantValue {
        case .array(_, let values): values
        case .byteArray(let b): b.map { .byte($0) }
        default: nil
        }
    }

    /// The strings of an `as`, `ao` or `ag`.
    package var stringArray: [String]? {
        arrayElements?.compactMap(\.string)
    }

    /// The fields of a structure.
    package var structureFields: [DBusValue]? {
        if case .structure(let fields) = variantValue { fields } else { nil }
    }

    /// The entries of any dictionary, in wire order.
    package var dictionaryEntries: [DBusDictEntry]? {
        if case .dictionary(_, _, let entries) = variantValue { entries } else { nil }
    }

    /// A dictionary keyed by strings or object paths (`a{sv}`, `a{oa{sa{sv}}}`, …). Values stay as sent except
    /// that one variant level is unwrapped, so `a{sv}` values come back as plain values.
    package var stringKeyedDictionary: [String: DBusValue]? {
        guard let entries = dictionaryEntries else { return nil }
        var result: [String: DBusValue] = [:]
        result.reserveCapacity(entries.count)
        for entry in entries {
            guard let key = entry.key.string else { return nil }
            result[key] = entry.value.unwrappingOneVariant
        }
        return result
    }

    /// A dictionary keyed by `q` (`a{qv}`, BlueZ `ManufacturerData`), variant values unwrapped one level.
    package var uint16KeyedDictionary: [UInt16: DBusValue]? {
        guard let entries = dictionaryEntries else { return nil }
        var result: [UInt16: DBusValue] = [:]
        for entry in entries {
            guard let key = entry.key.uint16 else { return nil }
            result[key] = entry.value.unwrappingOneVariant
        }
        return result
    }

    private var unwrappingOneVariant: DBusValue {
        if case .variant(let inner) = self { inner } else { self }
    }
}
