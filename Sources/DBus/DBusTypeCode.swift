internal import CDBus

/// libdbus's `DBUS_TYPE_*` codes. They are `((int) 'x')` macros, which Swift cannot import.
enum DBusTypeCode {
    static let invalid: Int32 = 0
    static let byte = code("y")
    static let boolean = code("b")
    static let int16 = code("n")
    static let uint16 = code("q")
    static let int32 = code("i")
    static let uint32 = code("u")
    static let int64 = code("x")
    static let uint64 = code("t")
    static let double = code("d")
    static let string = code("s")
    static let objectPath = code("o")
    static let signature = code("g")
    static let unixFD = code("h")
    static let array = code("a")
    static let variant = code("v")
    static let structure = code("r")
    static let dictEntry = code("e")

    private static func code(_ character: Unicode.Scalar) -> Int32 { Int32(UInt8(ascii: character)) }
}

/// libdbus's `DBUS_MESSAGE_TYPE_*` codes.
enum DBusMessageKind {
    static let methodCall: Int32 = 1
    static let methodReturn: Int32 = 2
    static let error: Int32 = 3
    static let signal: Int32 = 4
}

/// Checks names before they reach libdbus, whose own checks abort the process by default.
enum DBusNameCheck {
    static func objectPath(_ path: String) throws(DBusError) {
        guard !path.utf8.contains(0), dbus_validate_path(path, nil) != 0 else {
            throw .invalid("\"\(path)\" is not a valid D-Bus object path")
        }
    }

    static func interface(_ name: String) throws(DBusError) {
        guard !name.utf8.contains(0), dbus_validate_interface(name, nil) != 0 else {
            throw .invalid("\"\(name)\" is not a valid D-Bus interface name")
        }
    }

    static func member(_ name: String) throws(DBusError) {
        guard !name.utf8.contains(0), dbus_validate_member(name, nil) != 0 else {
            throw .invalid("\"\(name)\" is not a valid D-Bus member name")
        }
    }

    static func busName(_ name: String) throws(DBusError) {
        guard !name.utf8.contains(0), dbus_validate_bus_name(name, nil) != 0 else {
            throw .invalid("\"\(name)\" is not a valid D-Bus bus name")
        }
    }

    static func singleCompleteType(_ signature: String) throws(DBusError) {
        guard !signature.utf8.contains(0), dbus_signature_validate_single(signature, nil) != 0 else {
            throw .invalid("\"\(signature)\" is not a single complete D-Bus type")
        }
    }
}
