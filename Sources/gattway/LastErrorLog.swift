import BridgeCore
import Logging
import Synchronization

/// The last message logged at error level or above, and the process's uptime, for `bridge/<gateway>/health`.
final class LastErrorLog: Sendable {
    private let started = ContinuousClock.now
    private let last = Mutex<HealthReport.LastError?>(nil)

    var uptime: Duration { ContinuousClock.now - started }
    var lastError: HealthReport.LastError? { last.withLock { $0 } }

    func record(_ message: String) {
        let error = HealthReport.LastError(atUptimeSeconds: Int(uptime.components.seconds), message: message)
        last.withLock { $0 = error }
    }
}

/// Logs through `inner` and hands every error (or critical) message to a ``LastErrorLog``: the message and its
/// `error` metadata, as logged (Gattway's messages are constant keys, its metadata escaped).
struct ErrorRecordingLogHandler: LogHandler {
    var inner: any LogHandler
    let errors: LastErrorLog

    var logLevel: Logger.Level {
        get { inner.logLevel }
        set { inner.logLevel = newValue }
    }

    var metadata: Logger.Metadata {
        get { inner.metadata }
        set { inner.metadata = newValue }
    }

    var metadataProvider: Logger.MetadataProvider? {
        get { inner.metadataProvider }
        set { inner.metadataProvider = newValue }
    }

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { inner[metadataKey: key] }
        set { inner[metadataKey: key] = newValue }
    }

    func log(event: LogEvent) {
        if event.level >= .error {
            let error = event.metadata?["error"].map { " error=\($0)" } ?? ""
            errors.record("\(event.message)\(error)")
        }
        inner.log(event: event)
    }
}
