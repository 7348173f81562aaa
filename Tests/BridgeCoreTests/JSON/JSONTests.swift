import BluetoothCore
import BridgeCore
import Testing

@Suite struct JSONTests {
    @Test func writerEscapesAndSeparates() {
        var writer = JSONWriter()
        writer.beginObject()
        writer.field("text", "a\"b\\c\nd\u{01}")
        writer.field("n", 3)
        writer.field("x", 0.5)
        writer.field("ok", true)
        writer.key("list")
        writer.beginArray()
        writer.value(1)
        writer.null()
        writer.value(Double.nan)
        writer.endArray()
        writer.endObject()
        #expect(writer.string == #"{"text":"a\"b\\c\nd\u0001","n":3,"x":0.5,"ok":true,"list":[1,null,null]}"#)
    }

    /// A key written from a literal, from text (escaped as a value is) and from a whole number read the same as
    /// keys written from text.
    @Test func keysFromLiteralsTextAndNumbers() throws {
        var writer = JSONWriter()
        writer.beginObject()
        writer.field("literal", 1)
        writer.field(JSONObjectKey(text: "t\u{e9}xt \"q\""), 2)
        writer.key(JSONObjectKey(decimal: 76))
        writer.value("0215")
        writer.field(JSONObjectKey(decimal: 0), true)
        writer.field(JSONObjectKey(decimal: UInt64(UInt16.max)), 0.5)
        writer.endObject()
        #expect(writer.string == #"{"literal":1,"téxt \"q\"":2,"76":"0215","0":true,"65535":0.5}"#)
        let parsed = try JSONValue(parsing: writer.bytes)
        #expect(parsed["t\u{e9}xt \"q\""] == .number("2"))
        #expect(parsed["65535"] == .number("0.5"))
    }

    /// Plain runs are copied whole and escapes cut them: an escape first, last, twice in a row, every control
    /// character's form, DEL, and multi-byte UTF-8 passed through unchanged, in keys as in values.
    @Test func writerEscapesAtEveryPositionOfARun() throws {
        var writer = JSONWriter()
        writer.beginObject()
        writer.field(JSONObjectKey(text: "\tkey\""), "\"\"plain run\r\u{7F}°C µg/m³\u{1F}")
        writer.field("", "")
        writer.field("only", "\\")
        writer.endObject()
        #expect(
            writer.string
                == #"{"\tkey\"":"\"\"plain run\r\u007f°C µg/m³\u001f","":"","only":"\\"}"#)
        let parsed = try JSONValue(parsing: writer.bytes)
        #expect(parsed["\tkey\""] == .string("\"\"plain run\r\u{7F}°C µg/m³\u{1F}"))
    }

    /// The writer tests eight bytes at a time for one to escape: every byte that needs an escape, at every position
    /// of strings long enough for two words and a tail, among plain ASCII and multi-byte UTF-8 (whose bytes from
    /// 0x80 up must pass through), is written as a byte-by-byte escaper writes it.
    @Test func writerEscapesEveryByteAtEveryPositionOfAWord() throws {
        let needingEscape = Array(UInt8(0)..<0x20) + [UInt8(ascii: "\""), UInt8(ascii: "\\"), 0x7F]
        let fillers: [[UInt8]] = [Array("abcdefghijklmnopqrstuvwx".utf8), Array("°µ³é€°µ³é€°µ³é€x".utf8)]
        for filler in fillers {
            for length in [1, 7, 8, 9, 16, 17, 23] where length <= filler.count {
                for position in 0..<length {
                    for byte in needingEscape {
                        var text = Array(filler[..<length])
                        text[position] = byte
                        let string = String(decoding: text, as: UTF8.self)
                        var writer = JSONWriter()
                        writer.value(string)
                        #expect(writer.bytes == Self.escapedOneByOne(Array(string.utf8)), "\(text)")
                    }
                }
                var writer = JSONWriter()
                let plain = String(decoding: filler[..<length], as: UTF8.self)
                writer.value(plain)
                #expect(try JSONValue(parsing: writer.bytes) == .string(plain))
            }
        }
    }

    /// RFC 8259's escapes, one byte at a time: the reference the writer's word-wise scan is held to.
    private static func escapedOneByOne(_ utf8: [UInt8]) -> [UInt8] {
        let hex = Array("0123456789abcdef".utf8)
        var out: [UInt8] = [UInt8(ascii: "\"")]
        for byte in utf8 {
            switch byte {
            case UInt8(ascii: "\""), UInt8(ascii: "\\"): out += [UInt8(ascii: "\\"), byte]
            case 0x0A: out += Array("\\n".utf8)
            case 0x0D: out += Array("\\r".utf8)
            case 0x09: out += Array("\\t".utf8)
            case 0..<0x20, 0x7F: out += Array("\\u00".utf8) + [hex[Int(byte >> 4)], hex[Int(byte & 0x0F)]]
            default: out.append(byte)
            }
        }
        out.append(UInt8(ascii: "\""))
        return out
    }

    @Test func writerWritesHexFieldsInPlaceAndSeparatesThem() {
        var writer = JSONWriter()
        writer.beginObject()
        writer.field("empty", hexOf: [])
        writer.field("data", hexOf: [0x00, 0x0F, 0xA5, 0xFF])
        writer.field("after", 1)
        writer.endObject()
        #expect(writer.string == #"{"empty":"","data":"000fa5ff","after":1}"#)
    }

    /// Whole numbers are written digit by digit, in place: what `String(number)` prints, at both ends of each range.
    @Test func writerWritesWholeNumbersAsTheStandardLibraryPrintsThem() {
        let ints = [0, 7, -7, 10, -10, 99, 100, 1_234_567_890, Int.max, Int.min, Int.max - 1, Int.min + 1]
        let int64s: [Int64] = [0, -1, Int64.max, Int64.min]
        let uint64s: [UInt64] = [0, 1, 9, 10, UInt64.max, UInt64.max - 1]
        var writer = JSONWriter()
        writer.beginArray()
        for number in ints { writer.value(number) }
        for number in int64s { writer.value(number) }
        for number in uint64s { writer.value(number) }
        writer.endArray()
        let expected = (ints.map(String.init) + int64s.map(String.init) + uint64s.map(String.init))
        #expect(writer.string == "[" + expected.joined(separator: ",") + "]")
    }

    /// Decimals are written from integers where they can be; the text is the standard library's in every case.
    @Test func writerWritesDecimalsAsTheStandardLibraryPrintsThem() {
        var generator = SystemRandomNumberGenerator()
        var numbers: [Double] = [
            0.001, 0.0015, 0.000999, 0.0001, 1e-7, 999_999_999.5, 999_999_999.999999, 1e9, 1e9 + 0.5, 0.1 + 0.2,
            21.5, 25.06, 0.15, 2.675, 1.005, 100.0, 0.5, 1e15, 123_456.789012, 1.0 / 3.0, .pi, -0.0, 0,
            .greatestFiniteMagnitude, .leastNonzeroMagnitude, Double(Int64.max),
        ]
        for _ in 0..<20_000 {
            let digits = Int.random(in: 0...7, using: &generator)
            var power = 1.0
            for _ in 0..<digits { power *= 10 }
            let bound = Int64.random(in: 1...12, using: &generator)
            var limit: Int64 = 1
            for _ in 0..<bound { limit *= 10 }
            numbers.append(Double(Int64.random(in: -limit...limit, using: &generator)) / power)
            numbers.append(Double.random(in: -2e9...2e9, using: &generator))
            numbers.append(Double.random(in: -1...1, using: &generator))
        }
        for number in numbers {
            var writer = JSONWriter()
            writer.value(number)
            #expect(writer.string == number.description, "\(number)")
        }
    }

    @Test func writerWritesAnAddressInItsCanonicalForm() throws {
        let address = try BluetoothAddress(parsing: "c4:7c:8d:0a:3e:f1")
        var writer = JSONWriter()
        writer.beginObject()
        writer.field("address", address: address)
        writer.field("after", 1)
        writer.endObject()
        #expect(writer.string == #"{"address":"C4:7C:8D:0A:3E:F1","after":1}"#)
        #expect(writer.string.contains(address.description))
    }

    /// The writer keeps "has an element" for 64 levels in a word and below them in an array: commas must come out
    /// right on both sides of that boundary, and after closing back up through it.
    @Test(arguments: [1, 63, 64, 65, 130])
    func writerSeparatesElementsAtEveryDepth(depth: Int) throws {
        var writer = JSONWriter()
        for _ in 0..<depth {
            writer.beginArray()
            writer.value(1)
        }
        for _ in 0..<depth {
            writer.value(2)
            writer.endArray()
        }
        let expected = String(repeating: "[1,", count: depth) + "2" + String(repeating: "],2", count: depth - 1) + "]"
        #expect(writer.string == expected)
        // Siblings after a deep document closes start afresh.
        writer = JSONWriter()
        writer.beginArray()
        for _ in 0..<depth { writer.beginArray() }
        for _ in 0..<depth { writer.endArray() }
        writer.beginObject()
        writer.endObject()
        writer.endArray()
        let nested = String(repeating: "[", count: depth) + String(repeating: "]", count: depth)
        #expect(writer.string == "[" + nested + ",{}]")
    }

    /// A document written in room on the stack moves to the heap when it outgrows that room: the same bytes as a
    /// writer with room of its own, whether it stays below the room, ends on its edge or grows past it.
    @Test(arguments: [0, 1, 200, 244, 245, 246, 600, 5_000])
    func documentOnTheStackGrowsOntoTheHeap(length: Int) throws {
        let text = String((0..<length).map { Character(Unicode.Scalar(UInt8(0x61 + $0 % 26))) })
        func write(_ writer: inout JSONWriter) {
            writer.beginObject()
            writer.field("text", text)
            writer.field("again", text)
            writer.endObject()
        }
        var own = JSONWriter()
        write(&own)
        let document = JSONWriter.document { write(&$0) }
        #expect(document == own.bytes)
        #expect(document.count == 2 * length + 22)
        let nested = JSONWriter.document { outer in
            outer.beginArray()
            outer.rawValue(JSONWriter.document { write(&$0) })
            outer.endArray()
        }
        #expect(nested == Array("[".utf8) + own.bytes + Array("]".utf8))
    }

    @Test func readerParsesWhatTheWriterWrites() throws {
        let text = #" {"a": [1, -2.5e3, true, null], "b": {"c": "\u00e9\ud83d\ude00"}, "n": 12345678901234567890} "#
        let value = try JSONValue(parsing: Array(text.utf8))
        #expect(value["b"]?["c"] == .string("é😀"))
        #expect(value["n"] == .number("12345678901234567890"))
        #expect(try JSONValue(parsing: value.serialized) == value)
    }

    @Test(arguments: ["", "{", "[1,]", "{\"a\" 1}", "01", "\"unterminated", "tru", "{} x", "\"\u{01}\"", "1.", "-"])
    func readerRejectsMalformedDocuments(text: String) {
        #expect(throws: JSONParseError.self) { try JSONValue(parsing: Array(text.utf8)) }
    }

    @Test func readerBoundsNestingDepth() {
        let deep = String(repeating: "[", count: 100) + String(repeating: "]", count: 100)
        #expect(throws: JSONParseError.self) { try JSONValue(parsing: Array(deep.utf8)) }
    }
}
