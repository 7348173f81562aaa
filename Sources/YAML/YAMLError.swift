/// Why YAML text could not be composed into one node.
///
/// Every case carries what an operator needs to find the problem: libyaml's own words and 1-based positions for
/// syntax, the key and its position for duplicates, the bound and where it was crossed for the limits.
package enum YAMLError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The bytes are not YAML's character set (a control character, say); `offset` counts bytes from the start.
    case unreadable(problem: String, offset: Int)
    /// libyaml's scanner or parser refused the text; `context` is what it was reading when it met the problem.
    case syntax(problem: String, at: YAMLMark, context: Context?)
    /// A mapping names the same key twice (`at` is the second one).
    case duplicateKey(String, at: YAMLMark)
    /// A mapping key is a sequence or a mapping.
    case nonScalarKey(at: YAMLMark)
    /// An alias names no anchor defined before it (this includes an alias inside its own anchor's node).
    case undefinedAlias(String, at: YAMLMark)
    /// A tag other than `!!str` or `!`; the composer resolves no other types by tag.
    case unsupportedTag(String, at: YAMLMark)
    /// The stream holds a second document.
    case multipleDocuments(at: YAMLMark)
    /// One of ``YAMLLimits`` was crossed.
    case limitExceeded(Limit, at: YAMLMark)
    /// libyaml could not allocate memory.
    case outOfMemory

    /// What libyaml was reading when it found a syntax problem, and where that started.
    package struct Context: Sendable, Hashable {
        /// libyaml's words, such as "while scanning a quoted scalar".
        package var text: String
        /// Where that construct starts.
        package var mark: YAMLMark

        /// The context `text`, starting at `mark`.
        package init(text: String, mark: YAMLMark) {
            self.text = text
            self.mark = mark
        }
    }

    /// The bound that was crossed, with its value.
    package enum Limit: Sendable, Hashable {
        case inputBytes(Int)
        case depth(Int)
        case nodes(Int)
    }

    /// The message for an operator, with the 1-based line and column where there is one.
    package var description: String {
        switch self {
        case .unreadable(let problem, let offset):
            "YAML cannot be read at byte \(offset): \(problem)"
        case .syntax(let problem, let mark, let context):
            "YAML syntax error at \(mark): \(problem)"
                + (context.map { " (\($0.text) starting at \($0.mark))" } ?? "")
        case .duplicateKey(let key, let mark):
            "YAML error at \(mark): duplicate key \"\(key)\""
        case .nonScalarKey(let mark):
            "YAML error at \(mark): a mapping key must be a scalar"
        case .undefinedAlias(let name, let mark):
            "YAML error at \(mark): alias *\(name) names no anchor defined before it"
        case .unsupportedTag(let tag, let mark):
            "YAML error at \(mark): tag \(tag) is not supported (only !!str)"
        case .multipleDocuments(let mark):
            "YAML error at \(mark): a second document; only one is read"
        case .limitExceeded(.inputBytes(let limit), _):
            "YAML error: the text is larger than \(limit) bytes"
        case .limitExceeded(.depth(let limit), let mark):
            "YAML error at \(mark): nested deeper than \(limit) sequences or mappings"
        case .limitExceeded(.nodes(let limit), let mark):
            "YAML error at \(mark): more than \(limit) nodes once aliases are expanded"
        case .outOfMemory:
            "YAML error: out of memory"
        }
    }
}

/// The bounds of one composition, so that hostile text costs bounded memory and time.
package struct YAMLLimits: Sendable, Hashable {
    /// The largest text accepted, in UTF-8 bytes.
    package var inputBytes: Int
    /// How deeply sequences and mappings may nest, counting those an alias brings in.
    package var depth: Int
    /// How many nodes the document may hold once every alias is replaced by its anchor's node: the bound that
    /// refuses an alias bomb (a few lines of anchors that each repeat the previous one ten times).
    package var nodes: Int

    /// Limits with Gattway's defaults: 1 MiB, 64 levels, 100,000 nodes.
    package init(inputBytes: Int = 1 << 20, depth: Int = 64, nodes: Int = 100_000) {
        self.inputBytes = inputBytes
        self.depth = depth
        self.nodes = nodes
    }
}
