import CYAML

/// One libyaml parsing event, copied out of C memory so the C event can be deleted at once.
enum YAMLEvent {
    case streamStart
    case streamEnd
    case documentStart(YAMLMark)
    case documentEnd
    case alias(anchor: String, YAMLMark)
    case scalar(String, YAMLScalarStyle, anchor: String?, tag: String?, YAMLMark)
    case sequenceStart(anchor: String?, tag: String?, YAMLMark)
    case sequenceEnd
    case mappingStart(anchor: String?, tag: String?, YAMLMark)
    case mappingEnd
}

/// libyaml's event parser over one UTF-8 buffer.
///
/// Owns one `yaml_parser_t`: `deinit` deletes it whatever path ended the parse, and ``next()`` deletes each C
/// event before returning its copy, so an error thrown anywhere leaks nothing. The buffer must outlive the parser
/// (libyaml reads it in place), which ``YAMLComposer`` ensures by using the parser only inside `withUTF8`.
final class YAMLEventParser {
    private var parser = yaml_parser_t()
    private let initialized: Bool

    /// `bytes` must not be empty: libyaml asserts on a null input pointer, which an empty buffer may have.
    init(_ bytes: UnsafeBufferPointer<UInt8>) {
        precondition(bytes.baseAddress != nil && !bytes.isEmpty, "YAMLEventParser needs at least one byte")
        initialized = yaml_parser_initialize(&parser) != 0
        if initialized { yaml_parser_set_input_string(&parser, bytes.baseAddress, bytes.count) }
    }

    deinit {
        if initialized { yaml_parser_delete(&parser) }
    }

    /// The next event, or libyaml's error.
    func next() throws(YAMLError) -> YAMLEvent {
        guard initialized else { throw .outOfMemory }
        var event = yaml_event_t()
        guard yaml_parser_parse(&parser, &event) != 0 else { throw currentError() }
        defer { yaml_event_delete(&event) }
        let mark = Self.mark(event.start_mark)
        switch event.type {
        case YAML_STREAM_START_EVENT: return .streamStart
        case YAML_STREAM_END_EVENT: return .streamEnd
        case YAML_DOCUMENT_START_EVENT: return .documentStart(mark)
        case YAML_DOCUMENT_END_EVENT: return .documentEnd
        case YAML_ALIAS_EVENT: return .alias(anchor: Self.string(event.data.alias.anchor) ?? "", mark)
        case YAML_SCALAR_EVENT:
            let scalar = event.data.scalar
            let text =
                scalar.value.map {
                    String(decoding: UnsafeBufferPointer(start: $0, count: scalar.length), as: UTF8.self)
                }
                ?? ""
            return .scalar(
                text, Self.style(scalar.style), anchor: Self.string(scalar.anchor), tag: Self.string(scalar.tag), mark)
        case YAML_SEQUENCE_START_EVENT:
            let start = event.data.sequence_start
            return .sequenceStart(anchor: Self.string(start.anchor), tag: Self.string(start.tag), mark)
        case YAML_SEQUENCE_END_EVENT: return .sequenceEnd
        case YAML_MAPPING_START_EVENT:
            let start = event.data.mapping_start
            return .mappingStart(anchor: Self.string(start.anchor), tag: Self.string(start.tag), mark)
        case YAML_MAPPING_END_EVENT: return .mappingEnd
        default:
            // YAML_NO_EVENT: libyaml returns it only after the stream end, which the composer never reads past.
            throw .syntax(problem: "unexpected event after the end of the stream", at: mark, context: nil)
        }
    }

    private func currentError() -> YAMLError {
        let problem = Self.string(parser.problem) ?? "unknown problem"
        switch parser.error {
        case YAML_MEMORY_ERROR:
            return .outOfMemory
        case YAML_READER_ERROR:
            return .unreadable(problem: problem, offset: Int(parser.problem_offset))
        default:
            let context = Self.string(parser.context).map {
                YAMLError.Context(text: $0, mark: Self.mark(parser.context_mark))
            }
            return .syntax(problem: problem, at: Self.mark(parser.problem_mark), context: context)
        }
    }

    private static func mark(_ mark: yaml_mark_t) -> YAMLMark {
        YAMLMark(line: Int(mark.line) + 1, column: Int(mark.column) + 1)
    }

    private static func style(_ style: yaml_scalar_style_t) -> YAMLScalarStyle {
        switch style {
        case YAML_SINGLE_QUOTED_SCALAR_STYLE, YAML_DOUBLE_QUOTED_SCALAR_STYLE: .quoted
        case YAML_LITERAL_SCALAR_STYLE, YAML_FOLDED_SCALAR_STYLE: .block
        default: .plain
        }
    }

    private static func string(_ pointer: UnsafeMutablePointer<yaml_char_t>?) -> String? {
        pointer.map { String(cString: $0) }
    }

    private static func string(_ pointer: UnsafePointer<CChar>?) -> String? {
        pointer.map { String(cString: $0) }
    }
}
