import Foundation

/// A program under measurement (gattway, a C relay or receiver, the bleak script): standard output is read line by
/// line so the benchmark can wait for a readiness line; standard error goes to a log file kept for failure
/// messages, so a long run's logs never grow in the benchmark's memory (TestWorld's ChildProcess, which starts the
/// broker and the simulator, keeps them in memory).
final class BenchProcess: @unchecked Sendable {
    // @unchecked: `process` and `logPath` are set once in init; `lines` is guarded by `lock`.
    let name: String
    let process: Process
    let logPath: String
    private let lock = NSLock()
    private var lines: [String] = []
    private var partial = Data()

    /// The C program under `GATTWAY_BENCH_C_WRAPPER` when set: a command and its options, split at spaces, that
    /// runs it (`scripts/callgrind-per-value` runs it under callgrind this way); the program itself otherwise.
    static func cProgram(_ binary: String, _ arguments: [String]) -> (executable: String, arguments: [String]) {
        guard let wrapper = ProcessInfo.processInfo.environment["GATTWAY_BENCH_C_WRAPPER"], !wrapper.isEmpty else {
            return (binary, arguments)
        }
        let words = wrapper.split(separator: " ").map(String.init)
        return (words[0], Array(words.dropFirst()) + [binary] + arguments)
    }

    init(_ executable: String, _ arguments: [String], environment: [String: String] = [:], logPath: String) throws {
        name = (executable as NSString).lastPathComponent
        self.logPath = logPath
        process = Process()
        if executable.contains("/") {
            process.executableURL = URL(fileURLWithPath: executable)
            process.arguments = arguments
        } else {
            process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
            process.arguments = [executable] + arguments
        }
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        guard FileManager.default.createFile(atPath: logPath, contents: nil),
            let log = FileHandle(forWritingAtPath: logPath)
        else { throw BenchError("cannot create the log file \(logPath) for \(name)") }
        let out = Pipe()
        process.standardOutput = out
        process.standardError = log
        process.standardInput = FileHandle.nullDevice
        out.fileHandleForReading.readabilityHandler = { [weak self] handle in
            self?.append(handle.availableData)
        }
        do {
            try process.run()
        } catch {
            throw BenchError("cannot start \(executable): \(error)")
        }
    }

    private func append(_ data: Data) {
        lock.lock()
        defer { lock.unlock() }
        partial.append(data)
        while let newline = partial.firstIndex(of: UInt8(ascii: "\n")) {
            lines.append(String(decoding: partial[partial.startIndex..<newline], as: UTF8.self))
            partial.removeSubrange(partial.startIndex...newline)
        }
    }

    private func firstLine(prefix: String) -> String? {
        lock.lock()
        defer { lock.unlock() }
        return lines.first { $0.hasPrefix(prefix) }
    }

    /// How many standard-output lines so far start with `prefix`, and the last of them.
    func lines(prefix: String) -> (count: Int, last: String?) {
        lock.lock()
        defer { lock.unlock() }
        let matching = lines.filter { $0.hasPrefix(prefix) }
        return (matching.count, matching.last)
    }

    var pid: Int32 { process.processIdentifier }
    var isRunning: Bool { process.isRunning }

    /// The log file's last `count` characters, for error messages.
    func logTail(_ count: Int = 3000) -> String {
        let text = (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? ""
        return String(text.suffix(count))
    }

    /// Waits for a standard-output line with `prefix`; fails when the program exits first or after `timeout`.
    func waitForLine(prefix: String, timeout: Duration) async throws -> String {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if let found = firstLine(prefix: prefix) { return found }
            guard process.isRunning else {
                throw BenchError(
                    "\(name) exited (status \(process.terminationStatus)) before printing \(prefix): \(logTail())")
            }
            try await Task.sleep(for: .milliseconds(20))
        }
        throw BenchError("\(name) did not print \(prefix) within \(timeout): \(logTail())")
    }

    /// SIGTERM, then SIGKILL when the program has not exited within `grace`.
    func stop(grace: Duration = .seconds(5)) async {
        guard process.isRunning else { return }
        kill(process.processIdentifier, SIGTERM)
        let deadline = ContinuousClock.now + grace
        while process.isRunning && ContinuousClock.now < deadline { try? await Task.sleep(for: .milliseconds(20)) }
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
    }

    deinit {
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
    }

    /// Runs a short helper (a compiler, `perf`) to its end, looked up on PATH; its status and standard error.
    static func runToEnd(_ program: String, _ arguments: [String], output: FileHandle = .nullDevice) throws
        -> (status: Int32, errors: String)
    {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = [program] + arguments
        process.standardOutput = output
        let errors = Pipe()
        process.standardError = errors
        do {
            try process.run()
        } catch {
            throw BenchError("cannot start \(program): \(error)")
        }
        let message = errors.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: message, as: UTF8.self))
    }
}

/// A benchmark failure with a message that names its cause.
struct BenchError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
