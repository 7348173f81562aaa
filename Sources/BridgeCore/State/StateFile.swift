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

    /// `20261124T213045Z`: ISO 8601's basic format, which sorts by time and needs no locale.
    static func compactUTC(_ date: Date) -> String {
        let components = Calendar.utc.dateComponents([.year, .month, .day, .hour, .minute, .second], from: date)
        func two(_ value: Int?) -> String {
            let value = value ?? 0
            return value < 10 ? "0\(value)" : "\(value)"
        }
        return "\(components.year ?? 0)\(two(components.month))\(two(components.day))T"
            + "\(two(components.hour))\(two(components.minute))\(two(components.second))Z"
    }
}

extension Calendar {
    fileprivate static let utc: Calendar = {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(secondsFromGMT: 0)!
        return calendar
    }()
}
