import Foundation

/// The built `gattway` binary, as a user runs it.
package enum GattwayBinary {
    /// The binary that `swift build` produced (GATTWAY_BINARY overrides it).
    package static var path: String {
        if let override = ProcessInfo.processInfo.environment["GATTWAY_BINARY"] { return override }
        for configuration in ["debug", "release"] {
            let candidate = "\(packageRoot)/.build/\(configuration)/gattway"
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        }
        return "\(packageRoot)/.build/debug/gattway"
    }

    /// Runs `gattway` with `arguments` to completion and returns its exit status and output.
    package static func run(
        _ arguments: [String], environment: [String: String]? = nil, timeout: Duration = .seconds(60)
    ) async throws -> (status: Int32, stdout: String, stderr: String) {
        try await runToCompletion(path, arguments, environment: environment, timeout: timeout)
    }

    /// Starts `gattway run --config <config>` in the background.
    package static func start(config: String, environment: [String: String] = [:], extraArguments: [String] = [])
        throws -> ChildProcess
    {
        try ChildProcess(path, ["run", "--config", config] + extraArguments, environment: environment)
    }
}

/// Resident memory of a running process in bytes, from /proc/PID/status (VmRSS), for memory-bound checks.
package func residentMemoryBytes(pid: Int32) -> Int? {
    guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8) else { return nil }
    for line in status.split(separator: "\n") where line.hasPrefix("VmRSS:") {
        let digits = line.split(separator: " ").dropFirst().first.flatMap { Int($0) }
        return digits.map { $0 * 1024 }
    }
    return nil
}
