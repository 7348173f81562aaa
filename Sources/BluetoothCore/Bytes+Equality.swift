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

    /// Whether the array holds exactly `bytes`, compared by `memcmp`.
    package func hasSameBytes(as bytes: UnsafeRawBufferPointer) -> Bool {
        guard count == bytes.count else { return false }
        return withUnsafeBytes { mine in
            guard let mine = mine.baseAddress, let theirs = bytes.baseAddress else { return true }
            return memcmp(mine, theirs, count) == 0
        }
    }
}

extension Array where Element == UInt8 {
    /// Makes the array hold exactly `bytes`, in its own room when it has the same count (then one copy, where
    /// `removeAll(keepingCapacity:)` and `append(contentsOf:)` cost some 300 instructions of generic range
    /// replacement for a payload written again for each advertisement), else by one range replacement.
    package mutating func replaceContents(with bytes: UnsafeRawBufferPointer) {
        guard count == bytes.count, let source = bytes.baseAddress else {
            replaceSubrange(indices, with: bytes)
            return
        }
        withUnsafeMutableBytes { $0.baseAddress!.copyMemory(from: source, byteCount: bytes.count) }
    }
}

extension String {
    /// Whether the string's UTF-8 is exactly `bytes`, compared in place by `memcmp` (a native string is read where
    /// it lies; `withUTF8` would need a mutable copy, a retain and a release).
    package func hasUTF8(_ bytes: UnsafeRawBufferPointer) -> Bool {
        func equal(_ utf8: UnsafeBufferPointer<UInt8>) -> Bool {
            guard utf8.count == bytes.count else { return false }
            return bytes.isEmpty || memcmp(utf8.baseAddress!, bytes.baseAddress!, bytes.count) == 0
        }
        if let same = utf8.withContiguousStorageIfAvailable(equal) { return same }
        var text = self
        return text.withUTF8(equal)
    }
}
