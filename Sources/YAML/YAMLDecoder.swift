/// Decodes `Decodable` values from YAML text (or a composed ``YAMLNode``).
///
/// The text is composed by ``YAMLComposer`` (one document, bounded, aliases resolved), then read with these
/// scalar rules. Only **plain** (unquoted) scalars are resolved; a quoted or block scalar is always text.
///
/// - **null**: plain nothing, `~`, `null`, `Null`, `NULL`. `decodeNil()` is true for these only; decoding a
///   value from one throws `DecodingError.valueNotFound`.
/// - **Bool**: plain `true`, `false`, `yes`, `no`, `on`, `off`, in any letter case.
/// - **Integers** (every `FixedWidthInteger`): plain decimal with an optional sign, or `0x`, `0o`, `0b` after the
///   sign; `_` may separate digits (`0x004C` is 76, `1_000` is 1000, `0102` is 102). A value that does not fit
///   the type is a type mismatch, like any other text.
/// - **Float, Double**: plain decimal with an optional fraction and exponent (`1.5`, `.5`, `1e-3`), `.inf`,
///   `+.inf`, `-.inf`, `.nan` (also `.Inf`/`.INF`, `.NaN`/`.NAN`), and any integer above. A finite text that
///   overflows the type is a type mismatch.
/// - **String**: any scalar, as written (`42` reads as "42", `0102` as "0102", `yes` as "yes"), except a plain null.
///
/// Decoding a type from the wrong kind of node (a mapping where a string is wanted, a scalar where a list is
/// wanted, text where a number is wanted) throws `DecodingError.typeMismatch`; a missing key throws
/// `DecodingError.keyNotFound`. Every error's `codingPath` is the path to the node, and its `debugDescription`
/// says what was found and where (1-based line and column).
package struct YAMLDecoder {
    /// The bounds of the composition when decoding from text.
    package var limits: YAMLLimits

    /// A decoder composing text within `limits`.
    package init(limits: YAMLLimits = YAMLLimits()) {
        self.limits = limits
    }

    /// Composes `text` and decodes `type` from its document.
    ///
    /// - Throws: ``YAMLError`` when the text does not compose; `DecodingError.valueNotFound` when it holds no
    ///   document; any `DecodingError` (or error of `type`'s initialiser) from decoding.
    package func decode<Value: Decodable>(
        _ type: Value.Type, from text: String, userInfo: [CodingUserInfoKey: Any] = [:]
    ) throws -> Value {
        guard let root = try YAMLComposer(limits: limits).compose(text) else {
            throw DecodingError.valueNotFound(
                type, DecodingError.Context(codingPath: [], debugDescription: "the YAML text holds no document"))
        }
        return try decode(type, from: root, userInfo: userInfo)
    }

    /// Decodes `type` from an already composed node.
    package func decode<Value: Decodable>(
        _ type: Value.Type, from node: YAMLNode, userInfo: [CodingUserInfoKey: Any] = [:]
    ) throws -> Value {
        try YAMLNodeDecoder(node: node, codingPath: [], userInfo: userInfo).decodeValue(type)
    }
}
