package import Foundation

/// A state file that could not be read back is moved aside, so that the next save does not destroy what an
/// operator may want to inspect, and the bridge starts afresh.
package enum StateFile {
    /// Renames `path` to `path.corrupt-<UTC time>` (with `-2`, `-3`… when that exists). Returns the new path.
    ///
    /// - Throws: the rename's error, when the file could not be moved.
    package static func moveAside(_ path: String, now: Date = Date()) throws -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyyyMMdd'T'HHmmss'Z'"
        let base = "\(path).corrupt-\(formatter.string(from: now))"
        var target = base
        var attempt = 1
        while FileManager.default.fileExists(atPath: target) {
            attempt += 1
            target = "\(base)-\(attempt)"
        }
        try FileManager.default.moveItem(atPath: path, toPath: target)
        return target
    }
}
