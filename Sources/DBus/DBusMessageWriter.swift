internal import CDBus

/// Appends `DBusValue`s to a libdbus message, checking every value first: libdbus aborts the process on a
/// type mismatch, so a bad value must become a thrown `InvalidArgs` error here instead.
enum DBusMessageWriter {
    static func append(_ values: [DBusValue], to message: OpaquePointer) throws(DBusError) {
        var iterator = DBusMessageIter()
        dbus_message_iter_init_append(message, &iterator)
        for value in values {
            try validate(value)
            try append(value, to: &iterator)
        }
    }

    /// Checks what libdbus would reject: signatures, paths, strings with NUL, element types.
    static func validate(_ value: DBusValue) throws(DBusError) {
        switch value {
        case .string(let s):
            if s.utf8.contains(0) { throw .invalid("a D-Bus string cannot contain NUL") }
        case .objectPath(let p):
            try DBusNameCheck.objectPath(p)
        case .signature(let g):
            if g.utf8.contains(0) || dbus_signature_validate(g, nil) == 0 {
                throw .invalid("\"\(g)\" is not a valid D-Bus signature")
            }
        case .unixFD(let fd):
            if fd.rawValue < 0 { throw .invalid("the file descriptor was already taken") }
        case .array(let element, let values):
            try DBusNameCheck.singleCompleteType(element)
            for v in values {
                guard v.signature == element else {
                    throw .invalid("array of \(element) holds a value of type \(v.signature)")
                }
                try validate(v)
            }
        case .dictionary(let key, let valueSignature, let entries):
            try DBusNameCheck.singleCompleteType("a{" + key + valueSignature + "}")
            for entry in entries {
                guard entry.key.signature == key, entry.value.signature == valueSignature else {
                    throw .invalid(
                        "dictionary a{\(key)\(valueSignature)} holds an entry of type {\(entry.key.signature)\(entry.value.signature)}"
                    )
                }
                try validate(entry.key)
                try validate(entry.value)
            }
        case .structure(let fields):
            if fields.isEmpty { throw .invalid("a D-Bus structure needs at least one field") }
            for field in fields { try validate(field) }
        case .variant(let inner):
            try validate(inner)
        default:
            break
        }
    }

    private static func append(_ value: DBusValue, to iterator: inout DBusMessageIter) throws(DBusError) {
        var ok: dbus_bool_t = 1
        switch value {
        case .byte(var v): ok = dbus_message_iter_append_basic(&iterator, DBusTypeCode.byte, &v)
        case .bool(let b):
            var v: dbus_bool_t = b ? 1 : 0  // dbus_bool_t is 32 bits wide
            ok = dbus_message_iter_append_basic(&iterator, DBusTypeCode.boolean, &v)
        case .int16(var v): ok = dbus_message_iter_append_basic(&iterator, DBusTypeCode.int16, &v)
        case .uint16(var v): ok = dbus_message_iter_append_basic(&iterator, DBusTypeCode.uint16, &v)
        case .int32(var v): ok = dbus_message_iter_append_basic(&iterator, DBusTypeCode.int32, &v)
        case .uint32(var v): ok = dbus_message_iter_append_basic(&iterator, DBusTypeCode.uint32, &v)
        case .int64(var v): ok = dbus_message_iter_append_basic(&iterator, DBusTypeCode.int64, &v)
        case .uint64(var v): ok = dbus_message_iter_append_basic(&iterator, DBusTypeCode.uint64, &v)
        case .double(var v): ok = dbus_message_iter_append_basic(&iterator, DBusTypeCode.double, &v)
        case .string(let s): ok = appendString(s, type: DBusTypeCode.string, to: &iterator)
        case .objectPath(let s): ok = appendString(s, type: DBusTypeCode.objectPath, to: &iterator)
        case .signature(let s): ok = appendString(s, type: DBusTypeCode.signature, to: &iterator)
        case .unixFD(let fd):
            var raw = fd.rawValue  // libdbus dups it; the caller keeps ownership of `fd`
            ok = dbus_message_iter_append_basic(&iterator, DBusTypeCode.unixFD, &raw)
        case .byteArray(let bytes):
            var sub = DBusMessageIter()
            guard dbus_message_iter_open_container(&iterator, DBusTypeCode.array, "y", &sub) != 0 else {
                throw outOfMemory()
            }
            ok = bytes.withUnsafeBufferPointer { buffer in
                var base = buffer.baseAddress ?? UnsafePointer(bitPattern: 1)  // libdbus wants non-NULL even for 0
                return dbus_message_iter_append_fixed_array(&sub, DBusTypeCode.byte, &base, Int32(buffer.count))
            }
            if dbus_message_iter_close_container(&iterator, &sub) == 0 { ok = 0 }
        case .array(let element, let values):
            try appendContainer(DBusTypeCode.array, element, to: &iterator) { (sub) throws(DBusError) in
                for v in values { try append(v, to: &sub) }
            }
        case .dictionary(let key, let valueSignature, let entries):
            try appendContainer(DBusTypeCode.array, "{" + key + valueSignature + "}", to: &iterator) {
                (sub) throws(DBusError) in
                for entry in entries {
                    try appendContainer(DBusTypeCode.dictEntry, nil, to: &sub) { (pair) throws(DBusError) in
                        try append(entry.key, to: &pair)
                        try append(entry.value, to: &pair)
                    }
                }
            }
        case .structure(let fields):
            try appendContainer(DBusTypeCode.structure, nil, to: &iterator) { (sub) throws(DBusError) in
                for field in fields { try append(field, to: &sub) }
            }
        case .variant(let inner):
            try appendContainer(DBusTypeCode.variant, inner.signature, to: &iterator) { (sub) throws(DBusError) in
                try append(inner, to: &sub)
            }
        }
        if ok == 0 { throw outOfMemory() }
    }

    private static func appendString(_ s: String, type: Int32, to iterator: inout DBusMessageIter) -> dbus_bool_t {
        s.withCString { pointer in
            var p: UnsafePointer<CChar>? = pointer  // append_basic takes `const char **` for strings
            return dbus_message_iter_append_basic(&iterator, type, &p)
        }
    }

    private static func appendContainer(
        _ type: Int32, _ signature: String?, to iterator: inout DBusMessageIter,
        _ body: (inout DBusMessageIter) throws(DBusError) -> Void
    ) throws(DBusError) {
        var sub = DBusMessageIter()
        let opened: dbus_bool_t
        if let signature {
            opened = dbus_message_iter_open_container(&iterator, type, signature, &sub)
        } else {
            opened = dbus_message_iter_open_container(&iterator, type, nil, &sub)
        }
        guard opened != 0 else { throw outOfMemory() }
        do {
            try body(&sub)
        } catch {
            dbus_message_iter_abandon_container(&iterator, &sub)
            throw error
        }
        guard dbus_message_iter_close_container(&iterator, &sub) != 0 else { throw outOfMemory() }
    }

    private static func outOfMemory() -> DBusError {
        DBusError(name: DBusError.noMemory, message: "libdbus could not grow the message (out of memory)")
    }
}
