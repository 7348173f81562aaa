import Glibc

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Tells systemd about the daemon's state through `$NOTIFY_SOCKET` (the sd_notify protocol: one datagram of
/// `KEY=VALUE` lines on a unix socket). Without the variable, as outside a `Type=notify` unit, it does nothing.
enum SystemdNotifier {
    static func notify(_ state: String) {
        guard let path = ProcessInfo.processInfo.environment["NOTIFY_SOCKET"], !path.isEmpty else { return }
        let fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue), 0)
        guard fd >= 0 else { return }
        defer { close(fd) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        // An address starting with "@" is in the abstract namespace: its first byte is NUL.
        var pathBytes = Array(path.utf8)
        if pathBytes.first == UInt8(ascii: "@") { pathBytes[0] = 0 }
        let capacity = MemoryLayout.size(ofValue: address.sun_path)
        guard pathBytes.count < capacity else { return }
        withUnsafeMutableBytes(of: &address.sun_path) { buffer in
            buffer.copyBytes(from: pathBytes)
        }
        let length = socklen_t(MemoryLayout<sa_family_t>.size + pathBytes.count)
        let bytes = Array(state.utf8)
        _ = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { socketAddress in
                bytes.withUnsafeBytes { sendto(fd, $0.baseAddress, $0.count, 0, socketAddress, length) }
            }
        }
    }
}
