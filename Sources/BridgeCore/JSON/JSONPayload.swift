#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The bytes of a JSON payload Gattway publishes, from an `Encodable` type that mirrors its schema in `schemas/mqtt`.
///
/// Keys come out sorted and `/` unescaped (topics read as topics). The payload types keep every number finite
/// (``JSONNumber``), so encoding them cannot fail; the hand-written ``JSONWriter`` stays only on the per-value hot
/// paths, where the benchmarks measure it.
package enum JSONPayload {
    package static func encode(_ value: some Encodable) -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        do {
            return Array(try encoder.encode(value))
        } catch {
            // Only a non-finite Double can make JSONEncoder throw, and the payload types hold none.
            preconditionFailure("a payload type holds a value JSON cannot carry: \(error)")
        }
    }
}

/// A number as JSON carries it: whole values as integers (`42`, not `42.0`), others as the shortest decimal, and a
/// value JSON has no form for (NaN, ±infinity) as `null`.
package struct JSONNumber: Encodable, Hashable, Sendable {
    package let value: Double

    package init(_ value: Double) { self.value = value }
    package init(_ value: Int) { self.value = Double(value) }

    package func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        if !value.isFinite {
            try container.encodeNil()
        } else if value == value.rounded(), abs(value) < 9e15 {
            try container.encode(Int64(value))
        } else {
            try container.encode(value)
        }
    }
}

/// A key chosen at run time (a metric's name, a configured discovery field).
package struct JSONKey: CodingKey {
    package let stringValue: String
    package var intValue: Int? { nil }

    package init(_ name: String) { stringValue = name }
    package init?(stringValue: String) { self.stringValue = stringValue }
    package init?(intValue: Int) { nil }
}
