import Dispatch
import Glibc

/// Ctrl-C (SIGINT) and SIGTERM as an event: a command that runs until interrupted awaits `received()` and then
/// cleans up (stops notifications, disconnects what it connected) instead of dying mid-way.
/// `@unchecked Sendable`: `sources` is set once in init and only cancelled in deinit; the stream is Sendable.
final class InterruptSignal: @unchecked Sendable {
    private let sources: [any DispatchSourceSignal]
    private let stream: AsyncStream<Void>
    private let continuation: AsyncStream<Void>.Continuation

    init() {
        (stream, continuation) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
        let continuation = self.continuation
        sources = [SIGINT, SIGTERM].map { number in
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler { continuation.yield() }
            source.resume()
            return source
        }
    }

    /// Returns when a signal arrives, or when the waiting task is cancelled.
    func received() async {
        for await _ in stream { return }
    }

    deinit {
        for source in sources { source.cancel() }
    }
}
