/// Comparing a device's advertised data with the last report's, on every report with a new reading.
///
/// An advertisement carries one manufacturer or service data entry nearly always. Two one-entry dictionaries are
/// compared entry to entry here, where `==` hashed the key to look it up in the other (for service data, a 36-byte
/// UUID text); the answer is the same. Concrete types, not a generic helper: across modules a generic would run
/// unspecialized.
extension Dictionary where Key == String, Value == [UInt8] {
    /// Whether both hold the same keys with the same bytes, as `==`.
    package func hasSameEntries(as other: Self) -> Bool {
        guard count == 1, other.count == 1, let mine = first, let theirs = other.first else { return self == other }
        return mine.key == theirs.key && mine.value.hasSameBytes(as: theirs.value)
    }
}

extension Dictionary where Key == UInt16, Value == [UInt8] {
    /// Whether both hold the same keys with the same bytes, as `==`.
    package func hasSameEntries(as other: Self) -> Bool {
        guard count == 1, other.count == 1, let mine = first, let theirs = other.first else { return self == other }
        return mine.key == theirs.key && mine.value.hasSameBytes(as: theirs.value)
    }
}
