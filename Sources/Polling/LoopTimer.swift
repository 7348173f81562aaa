/// A timer of a `PollLoop`; `cancel()` stops it (on the loop thread). Dropping it does not.
///
/// `@unchecked Sendable`: it only carries its id and its loop; `cancel()` checks that it runs on the loop thread.
package final class LoopTimer: @unchecked Sendable {
    let id: UInt64
    /// Strong, as a watch's (see `FileWatch`): the core holds the timer's handler, never the timer.
    private let core: PollLoopCore

    init(id: UInt64, core: PollLoopCore) {
        self.id = id
        self.core = core
    }

    /// Stops the timer; its handler does not run again, even when it was due in this turn.
    package func cancel() {
        core.cancelTimer(id)
    }
}
