/// A position in YAML text, 1-based like an editor shows it.
package struct YAMLMark: Sendable, Hashable, CustomStringConvertible {
    /// The line, from 1.
    package var line: Int
    /// The column in characters, from 1.
    package var column: Int

    /// The position at `line` and `column`, both 1-based.
    package init(line: Int, column: Int) {
        self.line = line
        self.column = column
    }

    /// "line 3, column 7", as error messages say it.
    package var description: String { "line \(line), column \(column)" }
}

/// How a scalar was written; only plain scalars can be null, booleans or numbers.
package enum YAMLScalarStyle: Sendable, Hashable {
    /// Unquoted (or tagged `!!str`/`!`, which makes it text like a quoted one: see ``YAMLComposer``).
    case plain
    /// `'single'` or `"double"` quoted.
    case quoted
    /// A `|` literal or `>` folded block.
    case block
}

/// One composed YAML node: aliases are already replaced by the node their anchor names.
package struct YAMLNode: Sendable, Hashable {
    /// The node's value.
    package enum Content: Sendable, Hashable {
        case scalar(String, YAMLScalarStyle)
        case sequence([YAMLNode])
        /// The pairs in the order written; keys are scalars and unique (``YAMLComposer`` refuses anything else).
        case mapping([YAMLMappingEntry])
    }

    /// What the node holds.
    package var content: Content
    /// Where the node starts.
    package var mark: YAMLMark

    /// A node holding `content`, starting at `mark`.
    package init(_ content: Content, at mark: YAMLMark) {
        self.content = content
        self.mark = mark
    }

    /// A plain scalar written as nothing, `~` or `null` (any of the three cases YAML allows).
    package var isNull: Bool {
        guard case .scalar(let text, .plain) = content else { return false }
        return YAMLScalarRules.isNull(text)
    }

    /// "a mapping", "a sequence", "null" or "the scalar \"…\"": what a decoding error says it found.
    package var kindDescription: String {
        switch content {
        case .mapping: "a mapping"
        case .sequence: "a sequence"
        case .scalar(let text, _): isNull ? "null" : "the scalar \"\(Self.abbreviated(text))\""
        }
    }

    private static func abbreviated(_ text: String) -> String {
        text.count <= 40 ? text : String(text.prefix(40)) + "…"
    }
}

/// One `key: value` pair of a mapping.
package struct YAMLMappingEntry: Sendable, Hashable {
    /// Always a scalar; its text is the key.
    package var key: YAMLNode
    /// The value, of any kind.
    package var value: YAMLNode

    /// The pair `key: value`.
    package init(key: YAMLNode, value: YAMLNode) {
        self.key = key
        self.value = value
    }

    /// The key's text.
    package var name: String {
        if case .scalar(let text, _) = key.content { return text }
        return ""
    }
}
