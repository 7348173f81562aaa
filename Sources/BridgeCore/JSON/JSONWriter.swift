package import BluetoothCore

/// A small, allocation-light JSON writer for MQTT payloads on the hot path.
///
/// Commas are inserted automatically; the caller pairs `begin…`/`end…` calls. Strings are escaped per
/// RFC 8259 (quote, backslash and control characters). Non-finite doubles are written as `null` because JSON
/// has no representation for them.
package struct JSONWriter: ~Copyable {
    /// The document's bytes, `length` of them in room for `capacity`, written in place: `Array.append` checked the
    /// array's uniqueness and capacity for each of the two dozen short pieces (keys, quotes, digits) an
    /// advertisement's two documents are made of, some 90 instructions a piece. Not copyable, so that exactly one
    /// writer owns the room and frees it.
    private var base: UnsafeMutablePointer<UInt8>
    private var capacity: Int
    private var length = 0
    /// Whether `base` is the writer's to free: false while it writes into room lent by `document(_:)`.
    private var ownsRoom = true
    /// Which open containers already have an element (so the next needs a comma), innermost last.
    private var containers = OpenContainers()
    /// True right after a key, so the following value takes no comma.
    private var afterKey = false

    /// Creates an empty writer, optionally reserving space.
    package init(reservingCapacity capacity: Int = 64) {
        self.capacity = Swift.max(capacity, 16)
        base = .allocate(capacity: self.capacity)
    }

    /// A writer whose room is `room`, lent for as long as the writer lives (see `document(_:)`).
    private init(lent room: UnsafeMutableBufferPointer<UInt8>) {
        base = room.baseAddress!
        capacity = room.count
        ownsRoom = false
    }

    deinit {
        if ownsRoom { base.deallocate() }
    }

    /// Room on the stack for `document(_:)`: the payloads written for every advertisement (a state, an advert) fit.
    /// Computed, not a stored `static let`, which every document would read through its lazy initialiser's check.
    static var documentRoom: Int { 512 }

    /// The bytes of one document that `write` writes, made in room on the stack (on the heap only past
    /// `documentRoom` bytes): a writer's own room was an allocation and a free for each payload, two for every
    /// advertisement with a new reading (its state and its advert).
    package static func document(_ write: (inout JSONWriter) -> Void) -> [UInt8] {
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: documentRoom) { room in
            var writer = JSONWriter(lent: room)
            write(&writer)
            return writer.bytes
        }
    }

    /// Writes the document `write` writes into `payload`, replacing what it held, in its own room when it is the
    /// only owner of room enough: room written again for each advertisement allocates nothing, where a new array
    /// for each was an allocation and a free, two for every advertisement with a new reading (its state and its
    /// advert).
    package static func document(into payload: inout [UInt8], _ write: (inout JSONWriter) -> Void) {
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: documentRoom) { room in
            var writer = JSONWriter(lent: room)
            write(&writer)
            payload.replaceContents(with: UnsafeRawBufferPointer(start: writer.base, count: writer.length))
        }
    }

    /// The bytes written so far.
    package var bytes: [UInt8] { Array(UnsafeBufferPointer(start: base, count: length)) }

    /// The document as a string.
    package var string: String { String(decoding: UnsafeBufferPointer(start: base, count: length), as: UTF8.self) }

    @inline(__always)
    private mutating func write(_ byte: UInt8) {
        if length == capacity { grow(toHold: length + 1) }
        base[length] = byte
        length += 1
    }

    @inline(__always)
    private mutating func write(_ source: UnsafeBufferPointer<UInt8>) {
        guard let start = source.baseAddress else { return }
        let end = length + source.count
        if end > capacity { grow(toHold: end) }
        // A raw copy: through `update(from:count:)` the keys and strings of an advertisement cost some 100
        // instructions more (counted by callgrind).
        UnsafeMutableRawPointer(base + length).copyMemory(from: start, byteCount: source.count)
        length = end
    }

    private mutating func write(_ text: StaticString) {
        text.withUTF8Buffer { write($0) }
    }

    private mutating func appendText(_ text: String) {
        if text.utf8.withContiguousStorageIfAvailable({ write($0) }) != nil { return }
        var text = text
        text.withUTF8 { write($0) }
    }

    private mutating func writeEscape(_ escape: [UInt8]) {
        escape.withUnsafeBufferPointer { write($0) }
    }

    /// At least doubles the room, so that a long document grows in few steps.
    private mutating func grow(toHold count: Int) {
        let grown = Swift.max(count, capacity * 2)
        let room = UnsafeMutablePointer<UInt8>.allocate(capacity: grown)
        room.moveInitialize(from: base, count: length)
        if ownsRoom { base.deallocate() }
        base = room
        capacity = grown
        ownsRoom = true
    }

    private mutating func separate() {
        if afterKey {
            afterKey = false
            return
        }
        if containers.markInnermost() { write(UInt8(ascii: ",")) }
    }

    package mutating func beginObject() {
        separate()
        write(UInt8(ascii: "{"))
        containers.open()
    }

    package mutating func endObject() {
        containers.close()
        write(UInt8(ascii: "}"))
    }

    package mutating func beginArray() {
        separate()
        write(UInt8(ascii: "["))
        containers.open()
    }

    package mutating func endArray() {
        containers.close()
        write(UInt8(ascii: "]"))
    }

    /// Writes an object key; the next call writes its value.
    package mutating func key(_ key: JSONObjectKey) {
        separate()
        switch key.text {
        case .literal(let name):
            name.withUTF8Buffer { writeQuoted($0, colon: true) }
        case .text(let name):
            appendQuoted(name)
            write(UInt8(ascii: ":"))
        case .decimal(let number):
            write(UInt8(ascii: "\""))
            appendDecimal(negative: false, magnitude: number)
            write(UInt8(ascii: "\""))
            write(UInt8(ascii: ":"))
        }
        afterKey = true
    }

    /// Writes the key `fragments` holds at `index` (see `JSONFragments.keys(_:)`); the next call writes its value.
    package mutating func key(_ fragments: JSONFragments, at index: Int) {
        separate()
        fragments.withFragment(at: index) { write($0) }
        afterKey = true
    }

    /// Writes the whole member (`"key":value`) `fragments` holds at `index` (see `JSONFragments.append(member:)`).
    package mutating func member(_ fragments: JSONFragments, at index: Int) {
        separate()
        fragments.withFragment(at: index) { write($0) }
    }

    /// Writes `name` as an object key, escaped as a string value is; the next call writes its value. The name is
    /// read where it lies: a `JSONObjectKey` made of it holds a copy (a retain and a release per key).
    package mutating func key(text name: String) {
        separate()
        appendQuoted(name)
        write(UInt8(ascii: ":"))
        afterKey = true
    }

    package mutating func value(_ text: String) {
        separate()
        appendQuoted(text)
    }

    package mutating func value(_ number: Int) {
        separate()
        appendDecimal(negative: number < 0, magnitude: UInt64(number.magnitude))
    }

    package mutating func value(_ number: Int64) {
        separate()
        appendDecimal(negative: number < 0, magnitude: number.magnitude)
    }

    package mutating func value(_ number: UInt64) {
        separate()
        appendDecimal(negative: false, magnitude: number)
    }

    package mutating func value(_ number: Double) {
        separate()
        if appendShortDecimal(number) { return }
        if number.isFinite {
            appendText(number.description)
        } else {
            write("null")
        }
    }

    /// Writes a decimal number exactly as ``DecimalNumber/description`` prints it.
    package mutating func value(_ number: DecimalNumber) {
        separate()
        appendText(number.description)
    }

    package mutating func value(_ flag: Bool) {
        separate()
        write(flag ? "true" : "false")
    }

    package mutating func null() {
        separate()
        write("null")
    }

    /// Writes pre-serialised JSON (for example a value from ``JSONValue/serialized``) as one value.
    package mutating func rawValue(_ json: [UInt8]) {
        separate()
        json.withUnsafeBufferPointer { write($0) }
    }

    /// Convenience: `"name": value` pairs.
    package mutating func field(_ name: JSONObjectKey, _ text: String) {
        key(name)
        value(text)
    }
    package mutating func field(_ name: JSONObjectKey, _ number: Int) {
        key(name)
        value(number)
    }
    package mutating func field(_ name: JSONObjectKey, _ number: Double) {
        key(name)
        value(number)
    }
    package mutating func field(_ name: JSONObjectKey, _ flag: Bool) {
        key(name)
        value(flag)
    }

    /// `"name": "C4:7C:8D:6A:3E:11"`, the address in its canonical form, written in place (an advert's JSON has one,
    /// and its `description` made a string on the heap for every advertisement).
    package mutating func field(_ name: JSONObjectKey, address: BluetoothAddress) {
        key(name)
        separate()
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: address.textLength + 2) { text in
            text[0] = UInt8(ascii: "\"")
            let length = address.write(
                separator: UInt8(ascii: ":"), into: UnsafeMutableBufferPointer(rebasing: text[1...]))
            text[length + 1] = UInt8(ascii: "\"")
            write(UnsafeBufferPointer(text))
        }
    }

    /// `"name": "<bytes as lower-case hex>"`, written in place: hex digits need no escaping, and advert JSON writes
    /// one such field per advertised entry on the advertisement hot path.
    package mutating func field(_ name: JSONObjectKey, hexOf data: [UInt8]) {
        key(name)
        separate()
        // Formatted on the stack and appended in one piece: appending byte by byte checked the array's
        // uniqueness and capacity twice per input byte.
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: data.count * 2 + 2) { text in
            text[0] = UInt8(ascii: "\"")
            for (offset, byte) in data.enumerated() {
                text[1 + offset * 2] = Hex.digit(byte >> 4)
                text[2 + offset * 2] = Hex.digit(byte)
            }
            text[text.count - 1] = UInt8(ascii: "\"")
            write(UnsafeBufferPointer(text))
        }
    }

    private mutating func appendQuoted(_ text: String) {
        // Read in place: `withUTF8` needs a mutable copy, a retain and a release for every name written.
        if text.utf8.withContiguousStorageIfAvailable({ appendQuoted($0) }) != nil { return }
        var text = text
        text.withUTF8 { appendQuoted($0) }
    }

    /// Copies the runs of bytes that need no escape in one piece each: nearly every string Gattway writes (names,
    /// units, hex, addresses) is one such run.
    private mutating func appendQuoted(_ utf8: UnsafeBufferPointer<UInt8>) {
        var escaped = Self.firstToEscape(in: utf8, from: 0)
        guard escaped < utf8.count else { return writeQuoted(utf8, colon: false) }
        write(UInt8(ascii: "\""))
        var runStart = 0
        while true {
            write(UnsafeBufferPointer(rebasing: utf8[runStart..<escaped]))
            guard escaped < utf8.count else { break }
            appendEscape(of: utf8[escaped])
            runStart = escaped + 1
            escaped = Self.firstToEscape(in: utf8, from: runStart)
        }
        write(UInt8(ascii: "\""))
    }

    /// `"run"`, and a colon after it when `colon`: text that needs no escape (nearly every key and string), room
    /// made once for it all and written in one copy, where a write for each quote and the colon checked the room
    /// each time.
    private mutating func writeQuoted(_ run: UnsafeBufferPointer<UInt8>, colon: Bool) {
        let end = length + run.count + (colon ? 3 : 2)
        if end > capacity { grow(toHold: end) }
        base[length] = UInt8(ascii: "\"")
        if let start = run.baseAddress {
            UnsafeMutableRawPointer(base + length + 1).copyMemory(from: start, byteCount: run.count)
        }
        base[length + 1 + run.count] = UInt8(ascii: "\"")
        if colon { base[end - 1] = UInt8(ascii: ":") }
        length = end
    }

    /// The index of the first byte at or after `start` that JSON must escape (a control character, `"`, `\` or
    /// DEL), or the count when there is none. It tests eight bytes at a time, where testing each byte cost eleven
    /// instructions a character of the names and keys every advertisement writes.
    private static func firstToEscape(in utf8: UnsafeBufferPointer<UInt8>, from start: Int) -> Int {
        var index = start
        if let base = utf8.baseAddress {
            let ones: UInt64 = 0x0101_0101_0101_0101
            let highBits: UInt64 = 0x8080_8080_8080_8080
            // `(w − n·ones) & ~w & highBits` is non-zero exactly when some byte of `w` is below `n` (for n ≤ 0x80: a
            // byte below it borrows into its high bit while its own high bit is clear); a byte equal to `c` is a
            // zero byte of `w ^ c·ones`. Bytes of multi-byte UTF-8 (0x80 and up) meet neither test.
            while utf8.count - index >= 8 {
                let word = UInt64(littleEndian: UnsafeRawPointer(base + index).loadUnaligned(as: UInt64.self))
                let quote = word ^ (ones &* 0x22)
                let backslash = word ^ (ones &* 0x5C)
                let delete = word ^ (ones &* 0x7F)
                let found =
                    ((word &- ones &* 0x20) & ~word) | ((quote &- ones) & ~quote)
                    | ((backslash &- ones) & ~backslash) | ((delete &- ones) & ~delete)
                if found & highBits != 0 { break }
                index += 8
            }
        }
        while index < utf8.count {
            let byte = utf8[index]
            if byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") || byte == 0x7F { return index }
            index += 1
        }
        return index
    }

    /// Writes a whole number in decimal, as `String(number)` would, without making the string: a state payload
    /// writes several on every advertisement, and the standard library's formatting ran on pages of its own.
    private mutating func appendDecimal(negative: Bool, magnitude: UInt64) {
        // 20 digits hold UInt64.max; one more for the sign.
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 21) { text in
            var start = text.count
            var rest = magnitude
            repeat {
                start -= 1
                text[start] = UInt8(ascii: "0") + UInt8(truncatingIfNeeded: rest % 10)
                rest /= 10
            } while rest > 0
            if negative {
                start -= 1
                text[start] = UInt8(ascii: "-")
            }
            write(UnsafeBufferPointer(rebasing: text[start...]))
        }
    }

    /// Writes `number` as its `description` reads when it has at most six decimals and lies between 0.001 and 10⁹
    /// in magnitude, as a sensor's readings do (a whole number of hundredths, say): its digits come from an integer,
    /// where the standard library's shortest-digits formatter ran on some 40 cache lines of its own for every
    /// advertisement with a new reading. False, with nothing written, for any other number.
    ///
    /// The same text: `d / 10ᵏ == number` with the fewest digits k holds for exactly the text `description` picks
    /// (the shortest that reads back as the same double; below 10⁹ with k ≤ 6 a step of 10⁻ᵏ exceeds the double's
    /// spacing, so one k-digit decimal at most reads back), and `magnitude × 10ᵏ` is far from a half-integer
    /// whenever some d fits, so rounding it finds that d.
    private mutating func appendShortDecimal(_ number: Double) -> Bool {
        let magnitude = number.magnitude
        guard magnitude >= 0.001, magnitude < 1e9 else { return false }
        var scale = 1.0
        var power: UInt64 = 1
        for digits in 0...6 {
            let scaled = (magnitude * scale).rounded()
            if scaled / scale == magnitude {
                let whole = UInt64(scaled)
                appendDecimal(negative: number < 0, magnitude: whole / power)
                write(UInt8(ascii: "."))
                guard digits > 0 else {
                    write(UInt8(ascii: "0"))
                    return true
                }
                // The fraction with its leading zeros: 25.06 is 2506 / 100, written "25" "." "06".
                var fraction = whole % power
                withUnsafeTemporaryAllocation(of: UInt8.self, capacity: digits) { text in
                    for position in stride(from: digits - 1, through: 0, by: -1) {
                        text[position] = UInt8(ascii: "0") + UInt8(truncatingIfNeeded: fraction % 10)
                        fraction /= 10
                    }
                    write(UnsafeBufferPointer(text))
                }
                return true
            }
            scale *= 10
            power *= 10
        }
        return false
    }

    private mutating func appendEscape(of byte: UInt8) {
        switch byte {
        case UInt8(ascii: "\""): writeEscape([UInt8(ascii: "\\"), UInt8(ascii: "\"")])
        case UInt8(ascii: "\\"): writeEscape([UInt8(ascii: "\\"), UInt8(ascii: "\\")])
        case 0x0A: writeEscape([UInt8(ascii: "\\"), UInt8(ascii: "n")])
        case 0x0D: writeEscape([UInt8(ascii: "\\"), UInt8(ascii: "r")])
        case 0x09: writeEscape([UInt8(ascii: "\\"), UInt8(ascii: "t")])
        default:
            writeEscape([
                UInt8(ascii: "\\"), UInt8(ascii: "u"), UInt8(ascii: "0"), UInt8(ascii: "0"),
                Hex.digit(byte >> 4), Hex.digit(byte),
            ])
        }
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

/// An object key: a literal in the source (`"rssi"`), written as it is, or any text, escaped as a string value is.
///
/// A literal is appended without the scan for characters to escape and without the string's reference counting:
/// some 300 instructions less for each of the half a dozen keys an advertisement's state and advert have. Literal
/// keys need no escaping (no control character, `"` or `\`), which debug builds check.
package struct JSONObjectKey: ExpressibleByStringLiteral, Sendable {
    enum Text: Sendable {
        case literal(StaticString)
        case text(String)
        case decimal(UInt64)
    }

    let text: Text

    package init(stringLiteral literal: StaticString) {
        assert(literal.withUTF8Buffer { !$0.contains { $0 < 0x20 || $0 == 0x22 || $0 == 0x5C || $0 == 0x7F } })
        text = .literal(literal)
    }

    package init(text: String) {
        self.text = .text(text)
    }

    /// A whole number as a key (`"76"`, a manufacturer's company id), written without making its text.
    package init(decimal number: UInt64) {
        text = .decimal(number)
    }
}
