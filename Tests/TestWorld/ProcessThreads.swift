import Glibc

/// This process's threads, as `/proc/self/task` lists them: what a test reads to see a loop's thread start and end.
package enum ProcessThreads {
    /// The names (`comm`) of the threads running now.
    package static func names() throws -> Set<String> {
        Set(try ids().compactMap { try? name(of: $0) })
    }

    /// Whether no thread is named `name` within `timeout` (a thread ends a moment after its last owner lets go).
    package static func end(_ name: String, within timeout: Duration = .seconds(2)) async throws -> Bool {
        let deadline = ContinuousClock.now.advanced(by: timeout)
        while try names().contains(name) {
            guard ContinuousClock.now < deadline else { return false }
            try await Task.sleep(for: .milliseconds(10))
        }
        return true
    }

    /// User plus system CPU time, in clock ticks, of the threads whose name starts with `prefix`.
    package static func cpuTicks(ofNamesStartingWith prefix: String) throws -> Int {
        var total = 0
        for id in try ids() {
            guard let name = try? name(of: id), name.hasPrefix(prefix) else { continue }
            let stat = try read("/proc/self/task/\(id)/stat")
            // After the name's closing parenthesis: state is field 0, utime field 11 and stime field 12.
            guard let fields = stat.split(separator: ")").last?.split(separator: " "), fields.count > 12,
                let user = Int(fields[11]), let system = Int(fields[12])
            else { throw TestWorldError("unexpected /proc/self/task/\(id)/stat: \(stat)") }
            total += user + system
        }
        return total
    }

    private static func name(of id: String) throws -> String {
        var name = try read("/proc/self/task/\(id)/comm")
        while name.last == "\n" { name.removeLast() }
        return name
    }

    private static func ids() throws -> [String] {
        guard let directory = opendir("/proc/self/task") else { throw TestWorldError("opendir: errno \(errno)") }
        defer { closedir(directory) }
        var ids: [String] = []
        while let entry = readdir(directory) {
            let id = withUnsafeBytes(of: entry.pointee.d_name) {
                String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self)
            }
            if id != "." && id != ".." { ids.append(id) }
        }
        return ids
    }

    private static func read(_ path: String) throws -> String {
        guard let file = fopen(path, "r") else { throw TestWorldError("fopen \(path): errno \(errno)") }
        defer { fclose(file) }
        var buffer = [UInt8](repeating: 0, count: 4096)
        let count = fread(&buffer, 1, buffer.count - 1, file)
        return String(decoding: buffer[0..<count], as: UTF8.self)
    }
}
