import Foundation

/// A private `dbus-daemon` for one test, listening on a unix socket in a fresh temporary folder.
///
/// Start it with `PrivateBus.start()` (or `withPrivateBus`), talk to it at `address`, and `stop()` it afterwards.
/// A missing `dbus-daemon` fails the test with a clear message; it is never skipped.
package final class PrivateBus: Sendable {
    /// The address clients connect to, e.g. `unix:path=/tmp/gattway-bus-1234/bus,guid=…`.
    package let address: String
    private let daemon: ChildProcess
    private let directory: String

    private init(address: String, daemon: ChildProcess, directory: String) {
        self.address = address
        self.daemon = daemon
        self.directory = directory
    }

    /// Starts `dbus-daemon` with a session-like configuration on a socket of its own.
    package static func start() async throws -> PrivateBus {
        let directory = try makeTemporaryDirectory("gattway-bus")
        let configuration = """
            <!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
             "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
            <busconfig>
              <type>session</type>
              <listen>unix:path=\(directory)/bus</listen>
              <auth>EXTERNAL</auth>
              <policy context="default">
                <allow send_destination="*" eavesdrop="true"/>
                <allow eavesdrop="true"/>
                <allow own="*"/>
              </policy>
              <limit name="max_incoming_bytes">1000000000</limit>
              <limit name="max_outgoing_bytes">1000000000</limit>
              <limit name="max_replies_per_connection">50000</limit>
            </busconfig>
            """
        let configPath = directory + "/bus.conf"
        try configuration.write(toFile: configPath, atomically: true, encoding: .utf8)
        let daemon: ChildProcess
        do {
            daemon = try ChildProcess(
                "dbus-daemon", ["--config-file=\(configPath)", "--nofork", "--nopidfile", "--print-address=1"])
        } catch {
            throw TestWorldError("cannot start dbus-daemon (is the dbus package installed?): \(error)")
        }
        // Generous: when the whole suite starts at once on two cores, a daemon can take many seconds to be scheduled.
        let address = try await daemon.waitForLine(timeout: .seconds(60)) { $0.hasPrefix("unix:") }
        return PrivateBus(address: address.trimmingCharacters(in: .whitespaces), daemon: daemon, directory: directory)
    }

    /// Stops the daemon and removes its folder. SIGKILL: a test bus has nothing to save, and under the test
    /// runner dbus-daemon was seen to ignore SIGTERM until the grace period ran out.
    package func stop() async {
        daemon.send(SIGKILL)
        _ = await daemon.waitForExit(timeout: .seconds(10))
        try? FileManager.default.removeItem(atPath: directory)
    }

    package var isRunning: Bool { daemon.isRunning }
}

/// Runs `body` with a private bus that is stopped afterwards, whether `body` succeeds or throws.
package func withPrivateBus<T>(_ body: (PrivateBus) async throws -> T) async throws -> T {
    let bus = try await PrivateBus.start()
    do {
        let result = try await body(bus)
        await bus.stop()
        return result
    } catch {
        await bus.stop()
        throw error
    }
}

/// Runs a command-line tool to completion (with a timeout) and returns its standard output.
package func runTool(_ executable: String, _ arguments: [String], timeout: Duration = .seconds(20)) async throws
    -> String
{
    let result = try await runToCompletion(executable, arguments, timeout: timeout)
    guard result.status == 0 else {
        throw TestWorldError(
            "\(executable) \(arguments) exited with \(result.status): \(result.stderr) \(result.stdout)")
    }
    return result.stdout
}

/// Runs a program to completion (with a timeout) and returns its exit status and output.
///
/// Output goes to temporary files rather than pipes, so everything is there once the process has exited: a pipe's
/// write end may be inherited by another program started at the same moment and then never reach end of file.
package func runToCompletion(
    _ executable: String, _ arguments: [String], environment: [String: String]? = nil,
    timeout: Duration = .seconds(20)
) async throws -> (status: Int32, stdout: String, stderr: String) {
    let directory = try makeTemporaryDirectory("gattway-tool")
    defer { try? FileManager.default.removeItem(atPath: directory) }
    let outputPath = directory + "/out"
    let errorPath = directory + "/err"
    _ = FileManager.default.createFile(atPath: outputPath, contents: nil)
    _ = FileManager.default.createFile(atPath: errorPath, contents: nil)
    // The child's output goes to files: nothing to drain while it runs, and no pipe a grandchild could hold open.
    let output = open(outputPath, O_WRONLY | O_CLOEXEC)
    let errorOutput = open(errorPath, O_WRONLY | O_CLOEXEC)
    defer {
        if output >= 0 { close(output) }
        if errorOutput >= 0 { close(errorOutput) }
    }
    guard output >= 0, errorOutput >= 0 else {
        throw TestWorldError("cannot open \(directory) for output: \(String(cString: strerror(errno)))")
    }
    let input = try openDevNull(O_RDONLY)
    defer { close(input) }
    let program = try SpawnedProgram(
        executable, arguments, environment: mergedEnvironment(environment), currentDirectory: nil, input: input,
        output: output, error: errorOutput)
    guard let status = await program.waitForExit(timeout: timeout) else {
        program.send(SIGKILL)
        throw TestWorldError("\(executable) \(arguments) did not finish within \(timeout)")
    }
    let printed = (try? String(contentsOfFile: outputPath, encoding: .utf8)) ?? ""
    let errors = (try? String(contentsOfFile: errorPath, encoding: .utf8)) ?? ""
    return (status, printed, errors)
}
