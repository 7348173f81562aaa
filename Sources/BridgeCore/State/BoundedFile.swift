#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A file read whole with plain `open`/`read`, at most `limit` bytes: the configuration (not trusted to be small) and
/// /proc files (whose size is reported as 0, so nothing sized by it would read them).
package enum BoundedFile {
    /// Why a file could not be read, in the system's words (`strerror`) or ours for a file too large.
    package struct ReadError: Error, CustomStringConvertible, Sendable {
        package let description: String
    }

    package static func contents(of path: String, limit: Int) -> Result<[UInt8], ReadError> {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return .failure(ReadError(description: String(cString: strerror(errno)))) }
        defer { close(descriptor) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            let count = chunk.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            if count < 0 {
                if errno == EINTR { continue }
                return .failure(ReadError(description: String(cString: strerror(errno))))
            }
            if count == 0 { return .success(bytes) }
            bytes += chunk[..<count]
            guard bytes.count <= limit else { return .failure(ReadError(description: "larger than \(limit) bytes")) }
        }
    }
}
