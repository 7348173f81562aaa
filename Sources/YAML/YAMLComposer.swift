/// Composes YAML text into one ``YAMLNode``: strict, bounded, and with aliases resolved.
///
/// - Exactly one document: an empty stream (nothing, or only comments) composes to nil, a second document is
///   ``YAMLError/multipleDocuments(at:)``.
/// - Aliases are replaced by a copy of their anchor's node (an anchor may be redefined; an alias takes the latest
///   definition before it). Merge keys (`<<`) get no special meaning: they stay an ordinary key.
/// - Mapping keys are scalars, unique by their text in each mapping.
/// - Tags: `!!str` and the non-specific `!` make a plain scalar text (style ``YAMLScalarStyle/quoted``); any other
///   tag is refused rather than silently ignored.
/// - Bounded by ``YAMLLimits``: the text's size, the nesting depth and the node count, both counted with aliases
///   expanded, so neither an alias bomb nor a deep nest of brackets costs more than the limits allow.
package struct YAMLComposer: Sendable {
    /// The bounds every composition is held to.
    package var limits: YAMLLimits

    /// A composer with `limits` (by default 1 MiB of text, 64 levels, 100,000 nodes).
    package init(limits: YAMLLimits = YAMLLimits()) {
        self.limits = limits
    }

    /// The document's root node, or nil for a stream without a document.
    package func compose(_ text: String) throws(YAMLError) -> YAMLNode? {
        guard text.utf8.count <= limits.inputBytes else {
            throw .limitExceeded(.inputBytes(limits.inputBytes), at: YAMLMark(line: 1, column: 1))
        }
        guard !text.utf8.isEmpty else { return nil }
        var text = text
        let result = text.withUTF8 { bytes in
            var builder = Builder(limits: limits)
            let parser = YAMLEventParser(bytes)
            return Result { () throws(YAMLError) -> YAMLNode? in try builder.run(parser) }
        }
        return try result.get()
    }
}

/// The composer's state while it reads events: the collections still open, innermost last.
private struct Builder {
    /// A composed node with what its aliases would cost: its node count and how deeply it nests collections.
    struct Composed {
        var node: YAMLNode
        var nodes: Int
        var collectionDepth: Int
    }

    /// A sequence or mapping whose end event has not come yet.
    struct OpenCollection {
        var isMapping: Bool
        var anchor: String?
        var mark: YAMLMark
        var items: [YAMLNode] = []
        var entries: [YAMLMappingEntry] = []
        var pendingKey: YAMLNode?
        var keys: Set<String> = []
        var nodes = 1
        var deepestChild = 0
    }

    let limits: YAMLLimits
    var open: [OpenCollection] = []
    var anchors: [String: Composed] = [:]
    var totalNodes = 0
    var root: Composed?

    init(limits: YAMLLimits) {
        self.limits = limits
    }

    mutating func run(_ parser: YAMLEventParser) throws(YAMLError) -> YAMLNode? {
        var sawDocument = false
        while true {
            switch try parser.next() {
            case .streamStart, .documentEnd:
                continue
            case .streamEnd:
                return root?.node
            case .documentStart(let mark):
                if sawDocument { throw .multipleDocuments(at: mark) }
                sawDocument = true
            case .alias(let name, let mark):
                guard var aliased = anchors[name] else { throw .undefinedAlias(name, at: mark) }
                try count(aliased.nodes, at: mark)
                guard open.count + aliased.collectionDepth <= limits.depth else {
                    throw .limitExceeded(.depth(limits.depth), at: mark)
                }
                aliased.node.mark = mark
                try attach(aliased)
            case .scalar(let text, let style, let anchor, let tag, let mark):
                try count(1, at: mark)
                var style = style
                if let tag {
                    guard Self.textTags.contains(tag) else { throw .unsupportedTag(tag, at: mark) }
                    if style == .plain { style = .quoted }
                }
                try finish(
                    Composed(node: YAMLNode(.scalar(text, style), at: mark), nodes: 1, collectionDepth: 0), anchor)
            case .sequenceStart(let anchor, let tag, let mark):
                try start(isMapping: false, anchor: anchor, tag: tag, at: mark)
            case .mappingStart(let anchor, let tag, let mark):
                try start(isMapping: true, anchor: anchor, tag: tag, at: mark)
            case .sequenceEnd, .mappingEnd:
                let collection = open.removeLast()
                let content: YAMLNode.Content =
                    collection.isMapping ? .mapping(collection.entries) : .sequence(collection.items)
                let composed = Composed(
                    node: YAMLNode(content, at: collection.mark), nodes: collection.nodes,
                    collectionDepth: collection.deepestChild + 1)
                try finish(composed, collection.anchor)
            }
        }
    }

    /// `tag:yaml.org,2002:str` is how libyaml reports `!!str`; `!` is the non-specific tag of a quoted-like scalar.
    private static let textTags: Set<String> = ["tag:yaml.org,2002:str", "!"]
    private static let collectionTags: Set<String> = ["tag:yaml.org,2002:seq", "tag:yaml.org,2002:map", "!"]

    private mutating func start(isMapping: Bool, anchor: String?, tag: String?, at mark: YAMLMark) throws(YAMLError) {
        if let tag, !Self.collectionTags.contains(tag) { throw .unsupportedTag(tag, at: mark) }
        try count(1, at: mark)
        guard open.count < limits.depth else { throw .limitExceeded(.depth(limits.depth), at: mark) }
        open.append(OpenCollection(isMapping: isMapping, anchor: anchor, mark: mark))
    }

    private mutating func count(_ nodes: Int, at mark: YAMLMark) throws(YAMLError) {
        totalNodes += nodes
        guard totalNodes <= limits.nodes else { throw .limitExceeded(.nodes(limits.nodes), at: mark) }
    }

    private mutating func finish(_ composed: Composed, _ anchor: String?) throws(YAMLError) {
        if let anchor { anchors[anchor] = composed }
        try attach(composed)
    }

    /// Hands a finished node to the innermost open collection, or makes it the root.
    private mutating func attach(_ composed: Composed) throws(YAMLError) {
        guard !open.isEmpty else {
            root = composed
            return
        }
        let last = open.count - 1
        open[last].nodes += composed.nodes
        open[last].deepestChild = max(open[last].deepestChild, composed.collectionDepth)
        guard open[last].isMapping else {
            open[last].items.append(composed.node)
            return
        }
        guard let key = open[last].pendingKey else {
            guard case .scalar(let name, _) = composed.node.content else { throw .nonScalarKey(at: composed.node.mark) }
            guard open[last].keys.insert(name).inserted else { throw .duplicateKey(name, at: composed.node.mark) }
            open[last].pendingKey = composed.node
            return
        }
        open[last].entries.append(YAMLMappingEntry(key: key, value: composed.node))
        open[last].pendingKey = nil
    }
}
