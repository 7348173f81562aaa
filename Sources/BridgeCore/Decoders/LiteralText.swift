/// Text fixed in the source, such as a unit or a Home Assistant class: copied without reference counting.
///
/// A decoded measurement carries three such texts. As strings, each copy of a measurement retained them and each
/// drop released them, and an advertisement's measurements are copied and dropped several times on their way to
/// its state payload.
package struct LiteralText: Sendable, Hashable, CustomStringConvertible, ExpressibleByStringLiteral {
    private let literal: StaticString

    package init(stringLiteral literal: StaticString) {
        self.literal = literal
    }

    package var description: String { literal.description }

    package static func == (lhs: Self, rhs: Self) -> Bool {
        lhs.literal.withUTF8Buffer { left in
            rhs.literal.withUTF8Buffer { right in
                left.count == right.count && (left.baseAddress == right.baseAddress || left.elementsEqual(right))
            }
        }
    }

    package func hash(into hasher: inout Hasher) {
        literal.withUTF8Buffer { hasher.combine(bytes: UnsafeRawBufferPointer($0)) }
    }
}
