import BridgeCore
import Glibc

extension LoaderTables {
    /// What `release()` did.
    package struct Released: Equatable, Sendable {
        /// Libraries whose tables were dropped.
        package var libraries: Int
        /// Bytes of address space advised away (resident or not).
        package var bytes: Int
    }

    /// Drops from this process's page tables the pages of every loaded shared library that hold only its
    /// dynamic-linking tables (see `loaderOnlyRange`). Call it once the process has loaded and bound what it runs;
    /// a later `dlopen` or symbol lookup reads the tables again from the page cache.
    ///
    /// The main executable is left alone: it is not laid out by GNU ld's rules (lld puts its read-only data first).
    package static func release() throws(ProcessMemoryError) -> Released {
        let pageSize = UInt64(sysconf(Int32(_SC_PAGESIZE)))
        let executable = try executablePath()
        var released = Released(libraries: 0, bytes: 0)
        for mapping in try currentMappings() where mapping.isObjectStart && mapping.path != executable {
            let length = Int(min(UInt(pageSize), mapping.end - mapping.start))
            let bytes = UnsafeRawBufferPointer(start: UnsafeRawPointer(bitPattern: mapping.start), count: length)
            // Only the mapping's first page is read, and the program headers must lie within it.
            guard let headers = try? ELFProgramHeader.parse(objectStart: bytes),
                let range = loaderOnlyRange(of: headers, pageSize: pageSize),
                UInt(range.upperBound) <= mapping.end - mapping.start
            else { continue }
            let address = UnsafeMutableRawPointer(bitPattern: mapping.start + UInt(range.lowerBound))
            let count = Int(range.upperBound - range.lowerBound)
            guard madvise(address, count, MADV_DONTNEED) == 0 else {
                throw ProcessMemoryError("madvise of \(mapping.path)'s loader tables", errno: errno)
            }
            released.libraries += 1
            released.bytes += count
        }
        return released
    }

    /// The resident KiB of the first mapping (the one `release` drops pages of) of the first library whose path
    /// contains `library`, in process `pid` ("self" for this one), from its smaps; nil when it maps no such library.
    package static func residentKiB(ofFirstSegmentOf library: String, pid: String = "self") throws(ProcessMemoryError)
        -> Int?
    {
        var inside = false
        for line in try readSmallFile("/proc/\(pid)/smaps", limit: 64 << 20).split(separator: "\n") {
            if let mapping = ProcessMapping(line: line) {
                inside = mapping.isObjectStart && mapping.path.contains(library)
            } else if inside, line.hasPrefix("Rss:") {
                return line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first.flatMap { Int($0) }
            }
        }
        return nil
    }

    static func currentMappings() throws(ProcessMemoryError) -> [ProcessMapping] {
        try readSmallFile("/proc/self/maps", limit: 4 << 20).split(separator: "\n").compactMap {
            ProcessMapping(line: $0)
        }
    }

    static func executablePath() throws(ProcessMemoryError) -> String {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let count = readlink("/proc/self/exe", &buffer, buffer.count - 1)
        guard count > 0 else { throw ProcessMemoryError("readlink /proc/self/exe", errno: errno) }
        return String(decoding: buffer[..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// A /proc file's text (its size is reported as 0: it is read until the end), at most `limit` bytes.
    static func readSmallFile(_ path: String, limit: Int) throws(ProcessMemoryError) -> String {
        switch BoundedFile.contents(of: path, limit: limit) {
        case .success(let bytes): return String(decoding: bytes, as: UTF8.self)
        case .failure(let error): throw ProcessMemoryError("read \(path): \(error)", errno: 0)
        }
    }
}

/// A system call that failed, with the system's reason.
package struct ProcessMemoryError: Error, CustomStringConvertible, Sendable {
    package var description: String

    init(_ what: String, errno code: Int32) {
        description = code == 0 ? what : "\(what): \(String(cString: strerror(code)))"
    }
}
