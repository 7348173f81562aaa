/// One line of `/proc/<pid>/maps`: a mapping, its permissions, the file offset it starts at and the file's path.
package struct ProcessMapping: Equatable, Sendable {
    package var start: UInt
    package var end: UInt
    package var permissions: String
    package var offset: UInt64
    package var path: String

    package init(start: UInt, end: UInt, permissions: String, offset: UInt64, path: String) {
        self.start = start
        self.end = end
        self.permissions = permissions
        self.offset = offset
        self.path = path
    }

    /// Parses one line; nil for anything that is not `start-end perms offset dev inode [path]`.
    package init?(line: Substring) {
        let fields = line.split(separator: " ", maxSplits: 5, omittingEmptySubsequences: true)
        guard fields.count >= 5 else { return nil }
        let range = fields[0].split(separator: "-")
        guard range.count == 2, let start = UInt(range[0], radix: 16), let end = UInt(range[1], radix: 16),
            start < end, fields[1].count == 4, let offset = UInt64(fields[2], radix: 16)
        else { return nil }
        self.init(
            start: start, end: end, permissions: String(fields[1]), offset: offset,
            path: fields.count == 6 ? String(fields[5].drop { $0 == " " }) : "")
    }

    /// The first mapping of a file-backed object, read-only and private: where its ELF header is.
    var isObjectStart: Bool { offset == 0 && permissions == "r--p" && path.hasPrefix("/") }
}
