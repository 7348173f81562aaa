import CSpawn
import Foundation
import Glibc
import Synchronization

/// A program started with `posix_spawn`, reaped by a thread of its own.
///
/// Why not Foundation's `Process`: on Linux its `run()` adds a close action for every descriptor number up to the
/// highest open one (thousands in a busy test process) and is not safe to call from several threads at once, and
/// its children inherit the spawning thread's blocked signals. Here the child gets exactly its three standard
/// descriptors (everything from 3 up is closed with one action), an empty signal mask and default dispositions.
///
/// A signal is never sent to a reused process id: the reaper first waits with `WNOWAIT` (the exited child stays a
/// zombie and keeps its id), then, under the same lock that `send` takes, records the status and reaps it.
package final class SpawnedProgram: Sendable {
    package let pid: Int32
    private let exit = Mutex<Int32?>(nil)

    /// Starts `executable` (looked up on PATH when it has no slash) with `arguments` and `environment` as the whole
    /// environment, with `input`, `output` and `error` as descriptors 0, 1 and 2. The caller keeps (and closes)
    /// its own copies of those three.
    package init(
        _ executable: String, _ arguments: [String], environment: [String: String], currentDirectory: String?,
        input: Int32, output: Int32, error: Int32
    ) throws {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }

        for (source, target) in [(input, Int32(0)), (output, 1), (error, 2)] {
            try Self.check(posix_spawn_file_actions_adddup2(&actions, source, target), "dup2 action")
        }
        try Self.check(posix_spawn_file_actions_addclosefrom_np(&actions, 3), "closefrom action")
        if let currentDirectory {
            try Self.check(posix_spawn_file_actions_addchdir_np(&actions, currentDirectory), "chdir action")
        }
        var noSignals = sigset_t()
        sigemptyset(&noSignals)
        posix_spawnattr_setsigmask(&attributes, &noSignals)
        // Signals this process may ignore or handle that a daemon must meet with their default action.
        var defaults = sigset_t()
        sigemptyset(&defaults)
        for signal in [SIGPIPE, SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGCHLD, SIGUSR1, SIGUSR2] {
            sigaddset(&defaults, signal)
        }
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        // Its own process group, so that a terminal's Ctrl-C reaches the test run and not every daemon at once.
        posix_spawnattr_setpgroup(&attributes, 0)
        posix_spawnattr_setflags(
            &attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETPGROUP))

        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        defer { for pointer in argv { free(pointer) } }
        let envp = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { for pointer in envp { free(pointer) } }
        var pid: pid_t = 0
        let result = posix_spawnp(&pid, executable, &actions, &attributes, argv, envp)
        guard result == 0 else {
            throw TestWorldError("cannot start \(executable): \(String(cString: strerror(result))) (errno \(result))")
        }
        self.pid = pid
        Thread.detachNewThread { [self] in reap() }
    }

    private static func check(_ result: Int32, _ what: String) throws {
        guard result == 0 else { throw TestWorldError("posix_spawn \(what): \(String(cString: strerror(result)))") }
    }

    private func reap() {
        var info = siginfo_t()
        while waitid(P_PID, id_t(pid), &info, WEXITED | WNOWAIT) != 0 && errno == EINTR {}
        exit.withLock { exit in
            var status: Int32 = 0
            while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
            exit = status
        }
    }

    /// Whether the program has not exited yet.
    package var isRunning: Bool { exit.withLock { $0 == nil } }

    /// The exit code, or the number of the signal that ended the program; nil while it runs.
    package var terminationStatus: Int32? { ending?.number }

    /// How the program ended, for messages ("exit status 1", "signal 9"); nil while it runs.
    package var termination: String? {
        ending.map { $0.bySignal ? "signal \($0.number)" : "exit status \($0.number)" }
    }

    /// The wait status taken apart: the signal that ended the program, or its exit code.
    private var ending: (number: Int32, bySignal: Bool)? {
        exit.withLock { status in
            guard let status else { return nil }
            let signal = status & 0x7f
            return signal == 0 ? ((status >> 8) & 0xff, false) : (signal, true)
        }
    }

    /// Sends `signal` unless the program has already exited (and its id may belong to another process).
    package func send(_ signal: Int32) {
        exit.withLock { status in
            if status == nil { _ = kill(pid, signal) }
        }
    }

    /// Waits for the program to exit, up to `timeout`; returns its status (see `terminationStatus`), or nil.
    package func waitForExit(timeout: Duration) async -> Int32? {
        let deadline = ContinuousClock.now + timeout
        while isRunning && ContinuousClock.now < deadline {
            try? await Task.sleep(for: .milliseconds(10))
        }
        return terminationStatus
    }
}

/// A pipe whose read end a thread of its own drains into `onData` until end of file, then calls `onEnd`.
///
/// Returns the write end for the child; the caller closes it once the child has started.
func drainedPipe(onData: @escaping @Sendable (Data) -> Void, onEnd: @escaping @Sendable () -> Void) throws
    -> Int32
{
    var ends: [Int32] = [-1, -1]
    guard pipe2(&ends, O_CLOEXEC) == 0 else {
        throw TestWorldError("pipe2: \(String(cString: strerror(errno)))")
    }
    let readEnd = ends[0]
    Thread.detachNewThread {
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(readEnd, $0.baseAddress, $0.count) }
            if count > 0 {
                onData(Data(buffer[0..<count]))
            } else if count < 0 && errno == EINTR {
                continue
            } else {
                break
            }
        }
        close(readEnd)
        onEnd()
    }
    return ends[1]
}

/// `/dev/null` opened for `flags`, for a child's unused standard descriptors.
func openDevNull(_ flags: Int32) throws -> Int32 {
    let fd = open("/dev/null", flags | O_CLOEXEC)
    guard fd >= 0 else { throw TestWorldError("/dev/null: \(String(cString: strerror(errno)))") }
    return fd
}

/// This process's environment with `overrides` on top.
func mergedEnvironment(_ overrides: [String: String]?) -> [String: String] {
    ProcessInfo.processInfo.environment.merging(overrides ?? [:]) { $1 }
}
