#if canImport(Glibc)
    import Glibc
#endif

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
        // The same literal is the same bytes at the same address: no closure, no byte compared. A literal of one
        // Unicode scalar has no address; its UTF-8 is compared, as `hash` reads it.
        guard lhs.literal.hasPointerRepresentation, rhs.literal.hasPointerRepresentation else {
            return lhs.literal.withUTF8Buffer { left in
                rhs.literal.withUTF8Buffer { right in left.elementsEqual(right) }
            }
        }
        let count = lhs.literal.utf8CodeUnitCount
        guard count == rhs.literal.utf8CodeUnitCount else { return false }
        return lhs.literal.utf8Start == rhs.literal.utf8Start
            || memcmp(lhs.literal.utf8Start, rhs.literal.utf8Start, count) == 0
    }

    package func hash(into hasher: inout Hasher) {
        literal.withUTF8Buffer { hasher.combine(bytes: UnsafeRawBufferPointer($0)) }
    }
}
