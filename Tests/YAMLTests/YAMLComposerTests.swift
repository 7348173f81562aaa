import Testing
import YAML

@Suite struct YAMLComposerTests {
    private func compose(_ text: String, limits: YAMLLimits = YAMLLimits()) throws(YAMLError) -> YAMLNode? {
        try YAMLComposer(limits: limits).compose(text)
    }

    private func error(_ text: String, limits: YAMLLimits = YAMLLimits()) -> YAMLError? {
        do {
            _ = try compose(text, limits: limits)
            return nil
        } catch {
            return error
        }
    }

    private func scalar(_ text: String, _ style: YAMLScalarStyle, _ line: Int, _ column: Int) -> YAMLNode {
        YAMLNode(.scalar(text, style), at: YAMLMark(line: line, column: column))
    }

    @Test func anEmptyStreamHasNoDocument() throws {
        #expect(try compose("") == nil)
        #expect(try compose("# only a comment\n\n") == nil)
        #expect(try compose("   \n") == nil)
    }

    @Test func mappingsKeepTheirOrderStylesAndPositions() throws {
        let root = try #require(
            try compose(
                """
                b: 1
                a: 'two'
                c: |
                  three
                d: [x, "y"]
                """))
        #expect(root.mark == YAMLMark(line: 1, column: 1))
        guard case .mapping(let entries) = root.content else {
            Issue.record("expected a mapping, got \(root)")
            return
        }
        #expect(entries.map(\.name) == ["b", "a", "c", "d"])
        #expect(entries[0].key == scalar("b", .plain, 1, 1))
        #expect(entries[0].value == scalar("1", .plain, 1, 4))
        #expect(entries[1].value == scalar("two", .quoted, 2, 4))
        #expect(entries[2].value == scalar("three\n", .block, 3, 4))
        #expect(
            entries[3].value
                == YAMLNode(
                    .sequence([scalar("x", .plain, 5, 5), scalar("y", .quoted, 5, 8)]),
                    at: YAMLMark(line: 5, column: 4)))
    }

    @Test func aliasesAreReplacedByTheirAnchorsNode() throws {
        let root = try #require(
            try compose(
                """
                base: &shared { qos: 1, retain: true }
                copy: *shared
                """))
        guard case .mapping(let entries) = root.content else {
            Issue.record("expected a mapping, got \(root)")
            return
        }
        #expect(entries[1].value.content == entries[0].value.content)
        // The alias's own position, so that errors point where the value is used.
        #expect(entries[1].value.mark == YAMLMark(line: 2, column: 7))
    }

    @Test func anAliasTakesTheLatestDefinitionBeforeIt() throws {
        let root = try #require(try compose("[&a one, *a, &a two, *a]"))
        guard case .sequence(let items) = root.content else {
            Issue.record("expected a sequence, got \(root)")
            return
        }
        #expect(
            items.map { if case .scalar(let text, _) = $0.content { text } else { "" } } == [
                "one", "one", "two", "two",
            ])
    }

    @Test func undefinedAndSelfReferencingAliasesAreRefused() {
        #expect(error("a: *nowhere") == .undefinedAlias("nowhere", at: YAMLMark(line: 1, column: 4)))
        #expect(error("a: &loop [1, *loop]") == .undefinedAlias("loop", at: YAMLMark(line: 1, column: 14)))
    }

    @Test func anAliasBombIsRefusedByTheNodeBound() {
        // Nine levels of ten aliases each would be a billion nodes; the bound stops it at the level that crosses it.
        var lines = ["a0: &a0 [x, x, x, x, x, x, x, x, x, x]"]
        for level in 1...9 {
            let aliases = Array(repeating: "*a\(level - 1)", count: 10).joined(separator: ", ")
            lines.append("a\(level): &a\(level) [\(aliases)]")
        }
        let found = error(lines.joined(separator: "\n"))
        guard case .limitExceeded(.nodes(100_000), let mark) = found else {
            Issue.record("expected the node limit, got \(String(describing: found))")
            return
        }
        // a0 to a3 fit (11 + 111 + 1,111 + 11,111 nodes); a4's aliases, on line 5, cross 100,000.
        #expect(mark.line == 5)
        #expect(found?.description.hasPrefix("YAML error at line 5, column ") == true)
        #expect(found?.description.hasSuffix(": more than 100000 nodes once aliases are expanded") == true)
    }

    @Test func theNodeBoundCountsPlainNodesToo() {
        let list = "[" + Array(repeating: "1", count: 20).joined(separator: ", ") + "]"
        #expect(error(list, limits: YAMLLimits(nodes: 21)) == nil)
        #expect(
            error(list, limits: YAMLLimits(nodes: 20)) == .limitExceeded(.nodes(20), at: YAMLMark(line: 1, column: 59)))
    }

    @Test func nestingIsBoundedIncludingWhatAnAliasBringsIn() {
        let deep = String(repeating: "[", count: 64) + String(repeating: "]", count: 64)
        #expect(error(deep) == nil)
        let tooDeep = String(repeating: "[", count: 65) + String(repeating: "]", count: 65)
        #expect(error(tooDeep) == .limitExceeded(.depth(64), at: YAMLMark(line: 1, column: 65)))
        // Ten levels of anchor used under 60 more: 70 deep once expanded.
        let anchored = "a: &deep " + String(repeating: "[", count: 10) + String(repeating: "]", count: 10)
        let user = "b: " + String(repeating: "[", count: 59) + "*deep" + String(repeating: "]", count: 59)
        #expect(error(anchored + "\n" + user) == .limitExceeded(.depth(64), at: YAMLMark(line: 2, column: 63)))
    }

    @Test func theInputSizeIsBounded() {
        let text = "k: " + String(repeating: "x", count: 100)
        #expect(error(text, limits: YAMLLimits(inputBytes: 103)) == nil)
        let found = error(text, limits: YAMLLimits(inputBytes: 102))
        #expect(found == .limitExceeded(.inputBytes(102), at: YAMLMark(line: 1, column: 1)))
        #expect(found?.description == "YAML error: the text is larger than 102 bytes")
    }

    @Test func duplicateKeysNameTheKeyAndItsPosition() {
        let found = error(
            """
            mqtt:
              url: a
              url: b
            """)
        #expect(found == .duplicateKey("url", at: YAMLMark(line: 3, column: 3)))
        #expect(found?.description == "YAML error at line 3, column 3: duplicate key \"url\"")
        // The same key in two different mappings is no duplicate.
        #expect(error("a: { k: 1 }\nb: { k: 2 }") == nil)
    }

    @Test func mappingKeysMustBeScalars() {
        #expect(error("? [a, b]\n: c") == .nonScalarKey(at: YAMLMark(line: 1, column: 3)))
    }

    @Test func aSecondDocumentIsRefused() {
        let found = error("a: 1\n---\nb: 2\n")
        #expect(found == .multipleDocuments(at: YAMLMark(line: 2, column: 1)))
        #expect(found?.description == "YAML error at line 2, column 1: a second document; only one is read")
        #expect(error("---\na: 1\n...\n") == nil)
    }

    @Test func syntaxErrorsCarryLibyamlsProblemContextAndPosition() {
        let found = error("mqtt:\n  url: \"mqtt://localhost\ndevices: []\n")
        #expect(
            found
                == .syntax(
                    problem: "found unexpected end of stream", at: YAMLMark(line: 4, column: 1),
                    context: .init(text: "while scanning a quoted scalar", mark: YAMLMark(line: 2, column: 8))))
        #expect(
            found?.description
                == "YAML syntax error at line 4, column 1: found unexpected end of stream "
                + "(while scanning a quoted scalar starting at line 2, column 8)")
        let badIndent = error("a:\n  b: 1\n c: 2\n")
        guard case .syntax(_, let mark, _) = badIndent else {
            Issue.record("expected a syntax error, got \(String(describing: badIndent))")
            return
        }
        #expect(mark.line == 3)
    }

    @Test func controlCharactersAreUnreadable() {
        let found = error("a: b\u{7}")
        #expect(found == .unreadable(problem: "control characters are not allowed", offset: 4))
        #expect(found?.description == "YAML cannot be read at byte 4: control characters are not allowed")
    }

    @Test func theStringTagMakesAPlainScalarTextAndOtherTagsAreRefused() throws {
        #expect(try compose("!!str 42") == scalar("42", .quoted, 1, 1))
        #expect(try compose("! 42") == scalar("42", .quoted, 1, 1))
        #expect(error("!!int 42") == .unsupportedTag("tag:yaml.org,2002:int", at: YAMLMark(line: 1, column: 1)))
        #expect(error("a: !custom { b: 1 }") == .unsupportedTag("!custom", at: YAMLMark(line: 1, column: 4)))
    }

    @Test func mergeKeysAreOrdinaryKeys() throws {
        let root = try #require(try compose("base: &b { x: 1 }\nuse: { <<: *b, y: 2 }"))
        guard case .mapping(let entries) = root.content, case .mapping(let use) = entries[1].value.content else {
            Issue.record("expected mappings, got \(root)")
            return
        }
        #expect(use.map(\.name) == ["<<", "y"])
    }
}
