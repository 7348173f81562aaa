package import Foundation

/// A daemon or client program started by a test, stopped (SIGTERM, then SIGKILL) when it is no longer needed.
///
/// Standard output is read line by line so that a test can wait for a readiness line (with a timeout) and
/// later inspect everything the program printed.
package final class ChildProcess: @unchecked Sendable {
    // @unchecked: `process` is only mutated in init; `lines` is guarded by `lock`.
    package let process: Process
    private let lock = NSLock()
    private var lines: [String] = []
    private var partial = Data()
    private var stderrText = Data()
    private var openStreams = 2
    package let name: String

    /// Starts `executable` with `arguments`. The executable is looked up on PATH when it has no slash.
    package init(
        _ executable: String, _ arguments: [String], environment: [String: String]? = nil,
        currentDirectory: String? = nil
    ) throws {
        name = executable
        process = makeProcess(executable, arguments, environment: environment)
        if let currentDirectory { process.currentDirectoryURL = URL(fileURLWithPath: currentDirectory) }
        let out = Pipe()
        let err = Pipe()
        process.standardOutput = out
        process.standardError = err
        process.standardInput = FileHandle.nullDevice
        out.fileHandleForReading.readabilityHandler = { [weak self] handle in
            let data = handle.availableData
            guard let self else { return }
            if data.isEmpty { return self.streamEnded(handle) }
            self.append(data)
        }
        err.fileHandleForReading.readabilityHandler = { [weak self] handle in
            let data = handle.availableData
            guard let self else { return }
            if data.isEmpty { return self.streamEnded(handle) }
            self.lock.lock()
            self.stderrText.append(data)
            self.lock.unlock()
        }
        try launch(process)
    }

    /// An empty read is end of file: the program (and every child holding the pipe) closed it.
    private func streamEnded(_ handle: FileHandle) {
        handle.readabilityHandler = nil
        lock.lock()
        openStreams -= 1
        lock.unlock()
    }

    /// Waits until standard output and standard error have both reached end of file, up to `timeout`, so that
    /// everything the program printed has been read; returns whether they did. End of file can come late, or not
    /// at all, when another program started at the same moment inherited the pipe, so the timeout is its bound.
    @discardableResult
    package func waitForEndOfOutput(timeout: Duration = .seconds(10)) async -> Bool {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if lock.withLock({ openStreams }) == 0 { return true }
            try? await Task.sleep(for: .milliseconds(10))
        }
        return false
    }

    private func append(_ data: Data) {
        lock.lock()
        defer { lock.unlock() }
        partial.append(data)
        while let newline = partial.firstIndex(of: UInt8(ascii: "\n")) {
            let line = String(decoding: partial[partial.startIndex..<newline], as: UTF8.self)
            lines.append(line)
            partial.removeSubrange(partial.startIndex...newline)
        }
    }

    /// Every complete line printed on standard output so far.
    package var outputLines: [String] {
        lock.lock()
        defer { lock.unlock() }
        return lines
    }

    /// Everything printed on standard error so far.
    package var errorOutput: String {
        lock.lock()
        defer { lock.unlock() }
        return String(decoding: stderrText, as: UTF8.self)
    }

    package var isRunning: Bool { process.isRunning }
    package var pid: Int32 { process.processIdentifier }

    /// Waits until a line of standard output satisfies `predicate`, failing after `timeout` or when the process exits.
    @discardableResult
    package func waitForLine(
        timeout: Duration = .seconds(30), _ predicate: (String) -> Bool
    ) async throws -> String {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if let line = outputLines.first(where: predicate) { return line }
            if !process.isRunning {
                // The line may still be in the pipe: read to end of file before concluding it never came.
                await waitForEndOfOutput(timeout: .seconds(2))
                if let line = outputLines.first(where: predicate) { return line }
                throw TestWorldError(
                    "\(name) exited with status \(process.terminationStatus) before printing the expected line; stderr: \(errorOutput)"
                )
            }
            try await Task.sleep(for: .milliseconds(20))
        }
        throw TestWorldError(
            "\(name) printed no expected line within \(timeout); stdout: \(outputLines.suffix(20)) stderr: \(errorOutput.suffix(2000))"
        )
    }

    /// Sends `signal` to the process.
    package func send(_ signal: Int32) {
        if process.isRunning { kill(process.processIdentifier, signal) }
    }

    /// Waits for the process to exit, up to `timeout`; returns its status, or nil when it is still running.
    package func waitForExit(timeout: Duration = .seconds(10)) async -> Int32? {
        let deadline = ContinuousClock.now + timeout
        while process.isRunning && ContinuousClock.now < deadline {
            try? await Task.sleep(for: .milliseconds(20))
        }
        return process.isRunning ? nil : process.terminationStatus
    }

    /// Stops the process: SIGTERM, then SIGKILL when it has not exited within `grace`.
    package func stop(grace: Duration = .seconds(5)) async {
        guard process.isRunning else { return }
        send(SIGTERM)
        if await waitForExit(timeout: grace) == nil {
            send(SIGKILL)
            _ = await waitForExit(timeout: .seconds(5))
        }
    }

    deinit {
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
    }
}

/// A process for `executable` (looked up on PATH when it has no slash) with this process's environment plus
/// `environment`.
/// Foundation's `Process.run()` on Linux is not safe to call from several threads at once (a test run crashed in
/// it with two launches in flight), and the suites launch daemons and tools in parallel: every launch of the test
/// world goes through this lock.
private let processLaunches = NSLock()

/// Launches `process`, one launch at a time.
package func launch(_ process: Process) throws {
    processLaunches.lock()
    defer { processLaunches.unlock() }
    try process.run()
}

func makeProcess(_ executable: String, _ arguments: [String], environment: [String: String]?) -> Process {
    let process = Process()
    if executable.contains("/") {
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
    } else {
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = [executable] + arguments
    }
    if let environment {
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
    }
    return process
}

/// A failure to set up the test world, with a message that says what went wrong.
package struct TestWorldError: Error, CustomStringConvertible {
    package let description: String
    package init(_ description: String) { self.description = description }
}
