#if canImport(Glibc)
    import Glibc
#endif

extension Array where Element == UInt8 {
    /// Whether both hold the same bytes, as `==`, compared by `memcmp`: `==` compared byte by byte, some five
    /// instructions a byte, and each advertisement compares its payloads (a hundred bytes and more) with the last
    /// ones published.
    package func hasSameBytes(as other: [UInt8]) -> Bool {
        guard count == other.count else { return false }
        return withUnsafeBytes { mine in
            other.withUnsafeBytes { theirs in
                guard let mine = mine.baseAddress, let theirs = theirs.baseAddress else { return true }
                return memcmp(mine, theirs, count) == 0
            }
        }
    }
}
