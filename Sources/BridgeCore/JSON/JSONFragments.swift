/// Pieces of JSON serialised once for documents that repeat them: the keys of a device's state document, its
/// address member. A device publishes the same keys with every new reading, and quoting, scanning for escapes and
/// copying each from its string cost about as much as the rest of the document; a fragment is one copy.
package struct JSONFragments: Sendable {
    /// The fragments one after another; `ends[i]` is where fragment `i` ends.
    private var bytes: [UInt8] = []
    private var ends: [Int] = []

    package init() {}

    /// `"name":` for each name, escaped as `JSONWriter.key(text:)` escapes it, for `JSONWriter.key(_:at:)`.
    package static func keys(_ names: some Sequence<String>) -> JSONFragments {
        var fragments = JSONFragments()
        for name in names { fragments.appendInsideObject { $0.key(text: name) } }
        return fragments
    }

    package var count: Int { ends.count }

    /// Appends a whole member, such as `"address":"C4:7C:8D:6A:3E:11"`, written by `write` into an object of its
    /// own, for `JSONWriter.member(_:at:)`.
    package mutating func append(member write: (inout JSONWriter) -> Void) {
        appendInsideObject(write)
    }

    /// Appends what `write` writes inside an object, without the object's braces.
    private mutating func appendInsideObject(_ write: (inout JSONWriter) -> Void) {
        var writer = JSONWriter()
        writer.beginObject()
        write(&writer)
        writer.endObject()
        let written = writer.bytes
        bytes.append(contentsOf: written[1..<(written.count - 1)])
        ends.append(bytes.count)
    }

    /// The fragment at `index`, as text (for tests and logs).
    package func text(at index: Int) -> String {
        withFragment(at: index) { String(decoding: $0, as: UTF8.self) }
    }

    func withFragment<Result>(at index: Int, _ body: (UnsafeBufferPointer<UInt8>) -> Result) -> Result {
        let start = index == 0 ? 0 : ends[index - 1]
        return bytes.withUnsafeBufferPointer { body(UnsafeBufferPointer(rebasing: $0[start..<ends[index]])) }
    }
}
