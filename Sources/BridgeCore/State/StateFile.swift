#if canImport(FoundationEssentials)
    package import FoundationEssentials
#else
    package import Foundation
#endif

/// A state file that could not be read back is moved aside, so that the next save does not destroy what an
/// operator may want to inspect, and the bridge starts afresh.
package enum StateFile {
    /// Renames `path` to `path.corrupt-<UTC time>` (with `-2`, `-3`… when that exists). Returns the new path.
    ///
    /// - Throws: the rename's error, when the file could not be moved.
    package static func moveAside(_ path: String, now: Date = Date()) throws -> String {
        let base = "\(path).corrupt-\(compactUTC(now))"
        var target = base
        var attempt = 1
        while FileManager.default.fileExists(atPath: target) {
            attempt += 1
            target = "\(base)-\(attempt)"
        }
        try FileManager.default.moveItem(atPath: path, toPath: target)
        return target
    }

    /// Writes `value` as JSON (sorted keys) to `url`, creating its folder. Written aside and renamed over the old
    /// file, so a crash never leaves half a file.
    package static func save(_ value: some Encodable, to url: URL) throws {
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        try encoder.encode(value).write(to: url, options: .atomic)
    }

    /// `20261124T213045Z`: ISO 8601's basic format in UTC, which sorts by time and needs no locale.
    static func compactUTC(_ date: Date) -> String {
        date.formatted(
            Date.ISO8601FormatStyle(
                dateSeparator: .omitted, dateTimeSeparator: .standard, timeSeparator: .omitted, timeZone: .gmt))
    }
}
