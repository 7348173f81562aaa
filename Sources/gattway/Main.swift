import ArgumentParser
import Glibc

/// The process's entry point: the `gattway` command runs as a task on the global executor, and the main thread parks
/// for the life of the process.
///
/// Why not `@main` on the async command itself: Swift's async entry hands the main thread to `dispatch_main()`,
/// which ends it with `pthread_exit`. The forced unwind that follows looks up the unwind tables of every frame on the
/// main stack, which kept about half a MiB of them resident for as long as the daemon ran. Nothing in Gattway runs
/// on the main actor, so nothing needs the main thread to drain the main queue.
///
/// The main thread blocks the asynchronous signals first, as libdispatch's own threads do. A process-directed
/// SIGINT or SIGTERM then waits in the pending set for the dispatch signal sources that handle it (ServiceLifecycle's
/// and `InterruptSignal`'s), and the threads started from here inherit the mask.
@main
enum GattwayMain {
    static func main() {
        var asynchronous = sigset_t()
        sigfillset(&asynchronous)
        for synchronous in [SIGILL, SIGTRAP, SIGFPE, SIGBUS, SIGSEGV, SIGSYS, SIGPIPE, SIGPROF] {
            sigdelset(&asynchronous, synchronous)
        }
        pthread_sigmask(SIG_BLOCK, &asynchronous, nil)
        // Detached: `main` is on the main actor, whose queue nothing drains.
        Task.detached {
            // ArgumentParser exits by itself on an error, `--help` and `--version`; success returns here.
            await Gattway.main()
            exit(EXIT_SUCCESS)
        }
        while true { pause() }
    }
}
