import Foundation

/// Free loopback TCP ports for the broker.
enum BenchFreePort {
    /// A port the kernel reports free on 127.0.0.1 (bound to port 0, then released).
    static func loopback() throws -> UInt16 {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw BenchError("socket() failed: errno \(errno)") }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = 0
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer in
                bind(fd, pointer, length) == 0 && getsockname(fd, pointer, &length) == 0
            }
        }
        guard bound else { throw BenchError("cannot bind a loopback port: errno \(errno)") }
        return UInt16(bigEndian: address.sin_port)
    }

    /// Waits (10 s at most) until something accepts connections on `port`, failing early when `process` exits.
    static func waitUntilAccepting(port: UInt16, process: BenchProcess) async throws {
        let deadline = ContinuousClock.now + .seconds(10)
        while ContinuousClock.now < deadline {
            if canConnect(port: port) { return }
            guard process.isRunning else { throw BenchError("\(process.name) exited: \(process.logTail())") }
            try await Task.sleep(for: .milliseconds(20))
        }
        throw BenchError("nothing accepts connections on port \(port) after 10 s: \(process.logTail())")
    }

    /// Whether something accepts TCP connections on 127.0.0.1:`port` now.
    static func canConnect(port: UInt16) -> Bool {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        } == 0
    }
}
