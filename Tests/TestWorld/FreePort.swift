import Foundation
import Synchronization

/// Finds a TCP port on 127.0.0.1 that is free right now, by binding port 0 and reading what the kernel chose.
package func freeLoopbackPort() throws -> UInt16 {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard fd >= 0 else { throw TestWorldError("socket() failed: errno \(errno)") }
    defer { close(fd) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = 0
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    let bound = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
    }
    guard bound == 0 else { throw TestWorldError("bind() failed: errno \(errno)") }
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    let named = withUnsafeMutablePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
    }
    guard named == 0 else { throw TestWorldError("getsockname() failed: errno \(errno)") }
    return UInt16(bigEndian: address.sin_port)
}

/// Whether something on 127.0.0.1 accepts a TCP connection on `port` right now (a daemon's listener is up).
package func loopbackPortAcceptsConnections(_ port: UInt16) -> Bool {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard fd >= 0 else { return false }
    defer { close(fd) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = port.bigEndian
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    return withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
            connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
        }
    } == 0
}

/// The package's root folder, found from this source file's location (Tests/TestWorld/FreePort.swift).
package let packageRoot: String = {
    var url = URL(fileURLWithPath: #filePath)
    for _ in 0..<3 { url.deleteLastPathComponent() }
    return url.path
}()

/// A fresh temporary folder for one test's files, removed when the process exits (a suite makes about a hundred, and
/// a machine that runs it often would keep them all). `GATTWAY_KEEP_TEST_FILES=1` keeps them for a look.
package func makeTemporaryDirectory(_ prefix: String = "gattway-test") throws -> String {
    let path = NSTemporaryDirectory() + "\(prefix)-\(UUID().uuidString.prefix(8))"
    try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    TemporaryDirectories.removeAtExit(path)
    return path
}

/// The folders `makeTemporaryDirectory` made, removed by an `atexit` handler installed with the first.
private enum TemporaryDirectories {
    private static let made = Mutex<[String]>([])
    private static let handlerInstalled: Bool = {
        guard ProcessInfo.processInfo.environment["GATTWAY_KEEP_TEST_FILES"] != "1" else { return false }
        return atexit { TemporaryDirectories.removeAll() } == 0
    }()

    static func removeAtExit(_ path: String) {
        guard handlerInstalled else { return }
        made.withLock { $0.append(path) }
    }

    private static func removeAll() {
        // A test may have removed its own folder already.
        for path in made.withLock({ $0 }) where FileManager.default.fileExists(atPath: path) {
            do {
                try FileManager.default.removeItem(atPath: path)
            } catch {
                // A child the test started may still write there; the folder is left, and that is said.
                FileHandle.standardError.write(Data("test folder \(path) not removed: \(error)\n".utf8))
            }
        }
    }
}
