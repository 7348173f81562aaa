/// A typed D-Bus value. Every value knows its signature, so an empty array or dictionary keeps its type.
///
/// `ay` is always decoded as `.byteArray` (one bulk copy), which is also how bytes should be built
/// (`DBusValue.bytes(_:)`); `.array(elementSignature: "y", …)` is still accepted when encoding.
package enum DBusValue: Sendable, Hashable {
    case byte(UInt8)
    case bool(Bool)
    case int16(Int16)
    case uint16(UInt16)
    case int32(Int32)
    case uint32(UInt32)
    case int64(Int64)
    case uint64(UInt64)
    case double(Double)
    case string(String)
    case objectPath(String)
    case signature(String)
    case unixFD(DBusFileDescriptor)
    /// `ay`, kept as one buffer rather than one value per byte.
    case byteArray([UInt8])
    /// `a<element>`; every element must have `elementSignature`.
    case array(elementSignature: String, [DBusValue])
    /// `a{<key><value>}` in the order given; keys must be basic types.
    case dictionary(keySignature: String, valueSignature: String, [DBusDictEntry])
    /// `(…)`; must hold at least one field.
    case structure([DBusValue])
    /// `v`.
    indirect case variant(DBusValue)

    /// The value's D-Bus signature, e.g. `a{sv}`.
    package var signature: String {
        switch self {
        case .byte: "y"
        case .bool: "b"
        case .int16: "n"
        case .uint16: "q"
        case .int32: "i"
        case .uint32: "u"
        case .int64: "x"
        case .uint64: "t"
        case .double: "d"
        case .string: "s"
        case .objectPath: "o"
        case .signature: "g"
        case .unixFD: "h"
        case .byteArray: "ay"
        case .array(let element, _): "a" + element
        case .dictionary(let key, let value, _): "a{" + key + value + "}"
        case .structure(let fields): "(" + fields.map(\.signature).joined() + ")"
        case .variant: "v"
        }
    }
}

/// One key/value pair of a D-Bus dictionary (`{kv}`).
package struct DBusDictEntry: Sendable, Hashable {
    package var key: DBusValue
    package var value: DBusValue

    package init(key: DBusValue, value: DBusValue) {
        self.key = key
        self.value = value
    }
}
