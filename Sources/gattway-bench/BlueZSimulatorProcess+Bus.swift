import Foundation
import TestWorld

extension BlueZSimulatorProcess {
    /// The simulator's private dbus-daemon (a child of its Python process): the adverts benchmark reports its CPU,
    /// so that a bus at its limit shows, and the peripheral's StartNotify hop ends at its delivery to the central.
    var busDaemonPID: Int32? {
        let path = "/proc/\(pid)/task/\(pid)/children"
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else { return nil }
        return text.split(separator: " ").compactMap { Int32($0) }.first { child in
            ((try? String(contentsOfFile: "/proc/\(child)/comm", encoding: .utf8)) ?? "").hasPrefix("dbus-daemon")
        }
    }
}
