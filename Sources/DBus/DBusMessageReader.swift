internal import CDBus

/// Decodes the arguments of a libdbus message into `DBusValue`s.
enum DBusMessageReader {
    static func arguments(of message: OpaquePointer) -> [DBusValue] {
        var iterator = DBusMessageIter()
        guard dbus_message_iter_init(message, &iterator) != 0 else { return [] }
        return readAll(&iterator)
    }

    /// The first argument when it is a string (error messages, `arg0` matching), without decoding the rest.
    static func firstString(of message: OpaquePointer) -> String? {
        var iterator = DBusMessageIter()
        guard dbus_message_iter_init(message, &iterator) != 0,
            dbus_message_iter_get_arg_type(&iterator) == DBusTypeCode.string
        else { return nil }
        var p: UnsafePointer<CChar>?
        dbus_message_iter_get_basic(&iterator, &p)
        return p.map { String(cString: $0) }
    }

    private static func readAll(_ iterator: inout DBusMessageIter) -> [DBusValue] {
        var values: [DBusValue] = []
        while dbus_message_iter_get_arg_type(&iterator) != DBusTypeCode.invalid {
            values.append(read(&iterator))
            dbus_message_iter_next(&iterator)
        }
        return values
    }

    private static func basic<T: BitwiseCopyable>(_ iterator: inout DBusMessageIter, _ initial: T) -> T {
        var value = initial
        dbus_message_iter_get_basic(&iterator, &value)
        return value
    }

    private static func string(_ iterator: inout DBusMessageIter) -> String {
        var p: UnsafePointer<CChar>?
        dbus_message_iter_get_basic(&iterator, &p)
        return p.map { String(cString: $0) } ?? ""
    }

    private static func read(_ iterator: inout DBusMessageIter) -> DBusValue {
        let type = dbus_message_iter_get_arg_type(&iterator)
        switch type {
        case DBusTypeCode.byte: return .byte(basic(&iterator, UInt8(0)))
        case DBusTypeCode.boolean: return .bool(basic(&iterator, dbus_bool_t(0)) != 0)
        case DBusTypeCode.int16: return .int16(basic(&iterator, Int16(0)))
        case DBusTypeCode.uint16: return .uint16(basic(&iterator, UInt16(0)))
        case DBusTypeCode.int32: return .int32(basic(&iterator, Int32(0)))
        case DBusTypeCode.uint32: return .uint32(basic(&iterator, UInt32(0)))
        case DBusTypeCode.int64: return .int64(basic(&iterator, Int64(0)))
        case DBusTypeCode.uint64: return .uint64(basic(&iterator, UInt64(0)))
        case DBusTypeCode.double: return .double(basic(&iterator, Double(0)))
        case DBusTypeCode.string: return .string(string(&iterator))
        case DBusTypeCode.objectPath: return .objectPath(string(&iterator))
        case DBusTypeCode.signature: return .signature(string(&iterator))
        case DBusTypeCode.unixFD:
            // libdbus hands out a fresh dup on every read; the new object owns and closes it.
            return .unixFD(DBusFileDescriptor(owning: basic(&iterator, Int32(-1))))
        case DBusTypeCode.array: return readArray(&iterator)
        case DBusTypeCode.structure:
            var sub = DBusMessageIter()
            dbus_message_iter_recurse(&iterator, &sub)
            return .structure(readAll(&sub))
        case DBusTypeCode.variant:
            var sub = DBusMessageIter()
            dbus_message_iter_recurse(&iterator, &sub)
            return .variant(read(&sub))
        default:
            // libdbus validated the message, so this is a type newer than this reader; keep the signature visible.
            return .signature("?\(type)")
        }
    }

    private static func readArray(_ iterator: inout DBusMessageIter) -> DBusValue {
        let elementType = dbus_message_iter_get_element_type(&iterator)
        var sub = DBusMessageIter()
        dbus_message_iter_recurse(&iterator, &sub)
        if elementType == DBusTypeCode.byte {
            // One bulk copy instead of one value per byte.
            var base: UnsafePointer<UInt8>?
            var count: Int32 = 0
            dbus_message_iter_get_fixed_array(&sub, &base, &count)
            guard let base, count > 0 else { return .byteArray([]) }
            return .byteArray(Array(UnsafeBufferPointer(start: base, count: Int(count))))
        }
        let signature = arraySignature(&iterator)
        let element = String(signature.dropFirst())
        if elementType == DBusTypeCode.dictEntry {
            // element is "{kv…}": the key is a basic type, so one character.
            let inner = element.dropFirst().dropLast()
            let key = String(inner.prefix(1))
            let value = String(inner.dropFirst())
            var entries: [DBusDictEntry] = []
            while dbus_message_iter_get_arg_type(&sub) == DBusTypeCode.dictEntry {
                var pair = DBusMessageIter()
                dbus_message_iter_recurse(&sub, &pair)
                let k = read(&pair)
                dbus_message_iter_next(&pair)
                entries.append(DBusDictEntry(key: k, value: read(&pair)))
                dbus_message_iter_next(&sub)
            }
            return .dictionary(keySignature: key, valueSignature: value, entries)
        }
        return .array(elementSignature: element, readAll(&sub))
    }

    private static func arraySignature(_ iterator: inout DBusMessageIter) -> String {
        guard let raw = dbus_message_iter_get_signature(&iterator) else { return "a" }
        defer { dbus_free(raw) }  // malloc'd by libdbus
        return String(cString: raw)
    }
}
