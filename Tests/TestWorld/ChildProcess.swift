import Foundation
import Glibc

/// A daemon or client program started by a test, stopped (SIGTERM, then SIGKILL) when it is no longer needed.
///
/// Standard output is read line by line so that a test can wait for a readiness line (with a timeout) and
/// later inspect everything the program printed.
package final class ChildProcess: Sendable {
    package let program: SpawnedProgram
    private let printed = PrintedOutput()
    package let name: String

    /// Starts `executable` with `arguments`. The executable is looked up on PATH when it has no slash.
    package init(
        _ executable: String, _ arguments: [String], environment: [String: String]? = nil,
        currentDirectory: String? = nil
    ) throws {
        name = executable
        let printed = self.printed
        let outputEnd = try drainedPipe(onData: { printed.append($0) }, onEnd: { printed.streamEnded() })
        defer { close(outputEnd) }
        let errorEnd = try drainedPipe(onData: { printed.appendError($0) }, onEnd: { printed.streamEnded() })
        defer { close(errorEnd) }
        let input = try openDevNull(O_RDONLY)
        defer { close(input) }
        program = try SpawnedProgram(
            executable, arguments, environment: mergedEnvironment(environment), currentDirectory: currentDirectory,
            input: input, output: outputEnd, error: errorEnd)
    }

    /// Waits until standard output and standard error have both reached end of file, up to `timeout`, so that
    /// everything the program printed has been read; returns whether they did. End of file can come late, or not
    /// at all, when a program the child started still holds the pipe, so the timeout is its bound.
    @discardableResult
    package func waitForEndOfOutput(timeout: Duration = .seconds(10)) async -> Bool {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if printed.allStreamsEnded { return true }
            try? await Task.sleep(for: .milliseconds(10))
        }
        return false
    }

    /// Every complete line printed on standard output so far.
    package var outputLines: [String] { printed.lines }

    /// Everything printed on standard error so far.
    package var errorOutput: String { printed.errorText }

    package var isRunning: Bool { program.isRunning }
    package var pid: Int32 { program.pid }

    /// The exit code, or the number of the signal that ended the program; nil while it runs.
    package var terminationStatus: Int32? { program.terminationStatus }

    /// Waits until a line of standard output satisfies `predicate`, failing after `timeout` or when the process exits.
    @discardableResult
    package func waitForLine(
        timeout: Duration = .seconds(30), _ predicate: (String) -> Bool
    ) async throws -> String {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if let line = outputLines.first(where: predicate) { return line }
            if !program.isRunning {
                // The line may still be in the pipe: read to end of file before concluding it never came.
                await waitForEndOfOutput(timeout: .seconds(2))
                if let line = outputLines.first(where: predicate) { return line }
                throw TestWorldError(
                    "\(name) exited (\(program.termination ?? "?")) before printing the expected line; stderr: \(errorOutput)"
                )
            }
            try await Task.sleep(for: .milliseconds(20))
        }
        // A waiter resumed late (a loaded machine's busy thread pool) must not miss a line that came in time.
        if let line = outputLines.first(where: predicate) { return line }
        throw TestWorldError(
            "\(name) printed no expected line within \(timeout); stdout: \(outputLines.suffix(20)) stderr: \(errorOutput.suffix(2000))"
        )
    }

    /// Sends `signal` to the process (unless it has exited).
    package func send(_ signal: Int32) {
        program.send(signal)
    }

    /// Waits for the process to exit, up to `timeout`; returns its status, or nil when it is still running.
    package func waitForExit(timeout: Duration = .seconds(10)) async -> Int32? {
        await program.waitForExit(timeout: timeout)
    }

    /// Stops the process: SIGTERM, then SIGKILL when it has not exited within `grace`.
    package func stop(grace: Duration = .seconds(5)) async {
        guard program.isRunning else { return }
        send(SIGTERM)
        if await waitForExit(timeout: grace) == nil {
            send(SIGKILL)
            _ = await waitForExit(timeout: .seconds(5))
        }
    }

    deinit {
        program.send(SIGKILL)
    }
}

/// What a program printed, filled by the threads that drain its pipes.
private final class PrintedOutput: @unchecked Sendable {
    // @unchecked: every field is guarded by `lock`.
    private let lock = NSLock()
    private var completeLines: [String] = []
    private var partial = Data()
    private var errorBytes = Data()
    private var openStreams = 2

    func append(_ data: Data) {
        lock.lock()
        defer { lock.unlock() }
        partial.append(data)
        while let newline = partial.firstIndex(of: UInt8(ascii: "\n")) {
            completeLines.append(String(decoding: partial[partial.startIndex..<newline], as: UTF8.self))
            partial.removeSubrange(partial.startIndex...newline)
        }
    }

    func appendError(_ data: Data) { lock.withLock { errorBytes.append(data) } }

    func streamEnded() { lock.withLock { openStreams -= 1 } }

    var allStreamsEnded: Bool { lock.withLock { openStreams == 0 } }
    var lines: [String] { lock.withLock { completeLines } }
    var errorText: String { lock.withLock { String(decoding: errorBytes, as: UTF8.self) } }
}

/// A failure to set up the test world, with a message that says what went wrong.
package struct TestWorldError: Error, CustomStringConvertible {
    package let description: String
    package init(_ description: String) { self.description = description }
}
