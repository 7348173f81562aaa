import Glibc

/// The unix socket a D-Bus address names, for the connections Gattway reads itself (see `DBusWireRelay`).
///
/// An address is a list of `transport:key=value,…` entries separated by `;`, values escaped as `%XX`; the first
/// `unix` entry with a `path` or `abstract` key is taken. Any other transport (tcp, launchd, …) gives nil, and the
/// connection is then left to libdbus alone.
struct DBusUnixAddress: Equatable {
    let path: String
    let isAbstract: Bool

    /// libdbus's system bus when `DBUS_SYSTEM_BUS_ADDRESS` is not set (`DBUS_SYSTEM_BUS_DEFAULT_ADDRESS`).
    static let defaultSystemBus = "unix:path=/var/run/dbus/system_bus_socket"

    /// The address of `bus` as libdbus would resolve it.
    static func of(_ bus: DBusBus) -> DBusUnixAddress? {
        switch bus {
        case .system:
            let configured = getenv("DBUS_SYSTEM_BUS_ADDRESS").map { String(cString: $0) }
            return parse(configured.flatMap { $0.isEmpty ? nil : $0 } ?? defaultSystemBus)
        case .address(let address):
            return parse(address)
        }
    }

    static func parse(_ address: String) -> DBusUnixAddress? {
        for entry in address.split(separator: ";") {
            guard let colon = entry.firstIndex(of: ":"), entry[..<colon] == "unix" else { continue }
            var path: String?
            var abstract: String?
            for pair in entry[entry.index(after: colon)...].split(separator: ",") {
                guard let equals = pair.firstIndex(of: "="),
                    let value = unescape(pair[pair.index(after: equals)...])
                else { return nil }
                switch pair[..<equals] {
                case "path": path = value
                case "abstract": abstract = value
                default: continue
                }
            }
            if let path, abstract == nil, !path.isEmpty { return DBusUnixAddress(path: path, isAbstract: false) }
            if let abstract, path == nil, !abstract.isEmpty {
                return DBusUnixAddress(path: abstract, isAbstract: true)
            }
        }
        return nil
    }

    /// A value with its `%XX` escapes undone; nil for a broken escape or a NUL.
    private static func unescape(_ value: Substring) -> String? {
        var bytes: [UInt8] = []
        var iterator = value.utf8.makeIterator()
        while let byte = iterator.next() {
            guard byte == UInt8(ascii: "%") else {
                bytes.append(byte)
                continue
            }
            guard let high = iterator.next().flatMap(hexValue), let low = iterator.next().flatMap(hexValue) else {
                return nil
            }
            bytes.append(high << 4 | low)
        }
        guard !bytes.contains(0) else { return nil }
        return String(decoding: bytes, as: UTF8.self)
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}
