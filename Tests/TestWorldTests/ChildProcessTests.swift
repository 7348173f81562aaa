import Glibc
import TestWorld
import Testing

/// The test world's launcher: what a child inherits, how it ends, and what it printed.
@Suite(.timeLimit(.minutes(2))) struct ChildProcessTests {
    @Test func aChildInheritsOnlyItsStandardDescriptors() async throws {
        // An open descriptor without close-on-exec, as libraries in the test process leave them.
        let leaked = open("/dev/null", O_RDONLY)
        defer { close(leaked) }
        let child = try ChildProcess("/bin/sh", ["-c", "ls /proc/self/fd"])
        #expect(await child.waitForExit(timeout: .seconds(30)) == 0)
        #expect(await child.waitForEndOfOutput(timeout: .seconds(10)))
        // ls itself opens one more (the directory it lists), which is not inherited.
        let inherited = child.outputLines.compactMap { Int($0) }.filter { $0 > 2 }
        #expect(inherited.count <= 1, "inherited descriptors: \(child.outputLines)")
    }

    @Test func sigtermReachesTheChildWhateverThisThreadBlocks() async throws {
        var blocked = sigset_t()
        sigemptyset(&blocked)
        sigaddset(&blocked, SIGTERM)
        var previous = sigset_t()
        pthread_sigmask(SIG_BLOCK, &blocked, &previous)
        let child = try ChildProcess("/bin/sleep", ["60"])
        pthread_sigmask(SIG_SETMASK, &previous, nil)
        child.send(SIGTERM)
        #expect(await child.waitForExit(timeout: .seconds(30)) == SIGTERM)
    }

    @Test func outputAndExitStatusAreKept() async throws {
        let child = try ChildProcess("/bin/sh", ["-c", "echo one; echo two >&2; echo three; exit 3"])
        #expect(await child.waitForExit(timeout: .seconds(30)) == 3)
        #expect(await child.waitForEndOfOutput(timeout: .seconds(10)))
        #expect(child.outputLines == ["one", "three"])
        #expect(child.errorOutput == "two\n")
        #expect(child.terminationStatus == 3)
    }

    @Test func aMissingProgramFailsWithItsName() throws {
        #expect(throws: TestWorldError.self) { try ChildProcess("gattway-no-such-program", []) }
    }

    @Test func runToCompletionGivesStatusAndOutputAndHonoursItsTimeout() async throws {
        let result = try await runToCompletion("/bin/sh", ["-c", "printf out; printf err >&2; exit 4"])
        #expect(result.status == 4 && result.stdout == "out" && result.stderr == "err")
        await #expect(throws: TestWorldError.self) {
            try await runToCompletion("/bin/sleep", ["30"], timeout: .milliseconds(300))
        }
    }
}
