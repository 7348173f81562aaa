import BluetoothCore

/// A small, allocation-light JSON writer for MQTT payloads on the hot path.
///
/// Commas are inserted automatically; the caller pairs `begin…`/`end…` calls. Strings are escaped per
/// RFC 8259 (quote, backslash and control characters). Non-finite doubles are written as `null` because JSON
/// has no representation for them.
package struct JSONWriter: Sendable {
    /// The bytes written so far.
    package private(set) var bytes: [UInt8] = []
    /// Which open containers already have an element (so the next needs a comma), innermost last.
    private var containers = OpenContainers()
    /// True right after a key, so the following value takes no comma.
    private var afterKey = false

    /// Creates an empty writer, optionally reserving space.
    package init(reservingCapacity capacity: Int = 64) {
        bytes.reserveCapacity(capacity)
    }

    /// The document as a string.
    package var string: String { String(decoding: bytes, as: UTF8.self) }

    private mutating func separate() {
        if afterKey {
            afterKey = false
            return
        }
        if containers.markInnermost() { bytes.append(UInt8(ascii: ",")) }
    }

    package mutating func beginObject() {
        separate()
        bytes.append(UInt8(ascii: "{"))
        containers.open()
    }

    package mutating func endObject() {
        containers.close()
        bytes.append(UInt8(ascii: "}"))
    }

    package mutating func beginArray() {
        separate()
        bytes.append(UInt8(ascii: "["))
        containers.open()
    }

    package mutating func endArray() {
        containers.close()
        bytes.append(UInt8(ascii: "]"))
    }

    /// Writes an object key; the next call writes its value.
    package mutating func key(_ name: String) {
        separate()
        appendQuoted(name)
        bytes.append(UInt8(ascii: ":"))
        afterKey = true
    }

    package mutating func value(_ text: String) {
        separate()
        appendQuoted(text)
    }

    package mutating func value(_ number: Int) {
        separate()
        bytes.append(contentsOf: String(number).utf8)
    }

    package mutating func value(_ number: Int64) {
        separate()
        bytes.append(contentsOf: String(number).utf8)
    }

    package mutating func value(_ number: UInt64) {
        separate()
        bytes.append(contentsOf: String(number).utf8)
    }

    package mutating func value(_ number: Double) {
        separate()
        if number.isFinite {
            bytes.append(contentsOf: number.description.utf8)
        } else {
            bytes.append(contentsOf: "null".utf8)
        }
    }

    /// Writes a decimal number exactly as ``DecimalNumber/description`` prints it.
    package mutating func value(_ number: DecimalNumber) {
        separate()
        bytes.append(contentsOf: number.description.utf8)
    }

    package mutating func value(_ flag: Bool) {
        separate()
        bytes.append(contentsOf: (flag ? "true" : "false").utf8)
    }

    package mutating func null() {
        separate()
        bytes.append(contentsOf: "null".utf8)
    }

    /// Writes pre-serialised JSON (for example a value from ``JSONValue/serialized``) as one value.
    package mutating func rawValue(_ json: [UInt8]) {
        separate()
        bytes.append(contentsOf: json)
    }

    /// Convenience: `"name": value` pairs.
    package mutating func field(_ name: String, _ text: String) {
        key(name)
        value(text)
    }
    package mutating func field(_ name: String, _ number: Int) {
        key(name)
        value(number)
    }
    package mutating func field(_ name: String, _ number: Double) {
        key(name)
        value(number)
    }
    package mutating func field(_ name: String, _ flag: Bool) {
        key(name)
        value(flag)
    }

    /// `"name": "<bytes as lower-case hex>"`, written in place: hex digits need no escaping, and advert JSON writes
    /// one such field per advertised entry on the advertisement hot path.
    package mutating func field(_ name: String, hexOf data: [UInt8]) {
        key(name)
        separate()
        bytes.reserveCapacity(bytes.count + data.count * 2 + 2)
        bytes.append(UInt8(ascii: "\""))
        for byte in data {
            bytes.append(Hex.lowercaseDigits[Int(byte >> 4)])
            bytes.append(Hex.lowercaseDigits[Int(byte & 0x0F)])
        }
        bytes.append(UInt8(ascii: "\""))
    }

    private mutating func appendQuoted(_ text: String) {
        bytes.append(UInt8(ascii: "\""))
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "\""): bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\"")])
            case UInt8(ascii: "\\"): bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\\")])
            case 0x0A: bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "n")])
            case 0x0D: bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "r")])
            case 0x09: bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "t")])
            case 0x00..<0x20, 0x7F:
                bytes.append(contentsOf: [
                    UInt8(ascii: "\\"), UInt8(ascii: "u"), UInt8(ascii: "0"), UInt8(ascii: "0"),
                    Hex.lowercaseDigits[Int(byte >> 4)], Hex.lowercaseDigits[Int(byte & 0x0F)],
                ])
            default: bytes.append(byte)
            }
        }
        bytes.append(UInt8(ascii: "\""))
    }
}

/// A stack of one flag per open container, "has an element yet", kept in a word for the first 64 levels (every
/// payload Gattway writes) so that writing a document allocates nothing for it, and in an array below those.
private struct OpenContainers: Sendable {
    private var depth = 0
    private var flags: UInt64 = 0
    private var deeper: [Bool] = []

    mutating func open() {
        if depth < 64 {
            flags &= ~(1 << UInt64(depth))
        } else {
            deeper.append(false)
        }
        depth += 1
    }

    mutating func close() {
        precondition(depth > 0, "JSONWriter: end without a matching begin")
        depth -= 1
        if depth >= 64 { deeper.removeLast() }
    }

    /// Marks the innermost container as having an element; whether it had one before. False outside any container.
    mutating func markInnermost() -> Bool {
        guard depth > 0 else { return false }
        let index = depth - 1
        if index >= 64 {
            defer { deeper[index - 64] = true }
            return deeper[index - 64]
        }
        let bit: UInt64 = 1 << UInt64(index)
        defer { flags |= bit }
        return flags & bit != 0
    }
}
