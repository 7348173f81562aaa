package import Logging
import Synchronization

/// A log handler that keeps every entry, for tests that assert what was logged.
package struct RecordingLogHandler: LogHandler {
    package struct Entry: Sendable {
        package let level: Logger.Level
        package let message: String
        package let metadata: [String: String]
    }

    package final class Entries: Sendable {
        private let entries = Mutex<[Entry]>([])
        package var all: [Entry] { entries.withLock { $0 } }
        func append(_ entry: Entry) { entries.withLock { $0.append(entry) } }
    }

    package let entries: Entries
    package var metadata: Logger.Metadata = [:]
    package var logLevel: Logger.Level = .trace

    /// A logger writing to a fresh record, and the record.
    package static func makeLogger(label: String = "test") -> (Logger, Entries) {
        let entries = Entries()
        return (Logger(label: label) { _ in RecordingLogHandler(entries: entries) }, entries)
    }

    package subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    package func log(event: LogEvent) {
        let merged = metadata.merging(event.metadata ?? [:]) { $1 }
        entries.append(Entry(level: event.level, message: "\(event.message)", metadata: merged.mapValues { "\($0)" }))
    }
}
