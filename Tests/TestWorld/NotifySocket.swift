import Foundation

/// A unix datagram socket standing in for systemd's `$NOTIFY_SOCKET`: the daemon under test sends its sd_notify
/// states (`READY=1`, `STOPPING=1`) here, and the test reads them in the order they were sent.
package final class NotifySocket: @unchecked Sendable {
    // @unchecked: `descriptor` is set once in init; `received` is guarded by `lock`.
    package let path: String
    private let descriptor: Int32
    private let lock = NSLock()
    private var received: [String] = []

    package init() throws {
        path = try makeTemporaryDirectory("gattway-notify") + "/notify.sock"
        descriptor = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue), 0)
        guard descriptor >= 0 else { throw TestWorldError("socket(AF_UNIX, SOCK_DGRAM) failed: errno \(errno)") }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        guard bytes.count < MemoryLayout.size(ofValue: address.sun_path) else {
            throw TestWorldError("notify socket path too long: \(path)")
        }
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: bytes) }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        guard bound == 0 else { throw TestWorldError("bind(\(path)) failed: errno \(errno)") }
    }

    /// Every datagram received so far, oldest first (reads what is waiting without blocking).
    package var states: [String] {
        lock.lock()
        defer { lock.unlock() }
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = buffer.withUnsafeMutableBytes {
                recv(descriptor, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT))
            }
            guard count > 0 else { break }
            received.append(String(decoding: buffer[0..<count], as: UTF8.self))
        }
        return received
    }

    /// Waits until a datagram equal to `state` has arrived, failing after `timeout`.
    package func waitFor(_ state: String, timeout: Duration = .seconds(30)) async throws {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if states.contains(state) { return }
            try await Task.sleep(for: .milliseconds(20))
        }
        throw TestWorldError("no \(state) on \(path) within \(timeout); received \(states)")
    }

    deinit {
        close(descriptor)
        try? FileManager.default.removeItem(atPath: (path as NSString).deletingLastPathComponent)
    }
}
