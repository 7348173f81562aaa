import BlueZ
import BluetoothCore
import Glibc
import Synchronization

/// The table `gattway scan` redraws once a second while scanning on a terminal, with a progress line (seconds
/// left, devices heard). Each redraw moves the cursor back to the first line it drew and clears to the end of the
/// screen (ANSI CSI F and J), so the terminal's scrollback keeps only the final table.
final class LiveScanDisplay: Sendable {
    private let adapter: String
    private let duration: Duration
    private let render: @Sendable ([BlueZDeviceState]) -> String
    private let state = Mutex(State())

    private struct State {
        var heard: [BlueZDeviceState] = []
        var linesDrawn = 0
    }

    /// True when standard output is a terminal: only then is the table redrawn in place.
    static var standardOutputIsATerminal: Bool { isatty(STDOUT_FILENO) == 1 }

    init(adapter: String, duration: Duration, render: @escaping @Sendable ([BlueZDeviceState]) -> String) {
        self.adapter = adapter
        self.duration = duration
        self.render = render
    }

    /// Takes the devices heard so far (called by the scan after each report; drawn at the next tick).
    func update(_ devices: [BlueZDeviceState]) {
        state.withLock { $0.heard = devices }
    }

    /// Redraws every second until cancelled.
    func run() async {
        let started = ContinuousClock.now
        while !Task.isCancelled {
            draw(left: duration - (ContinuousClock.now - started))
            try? await Task.sleep(for: .seconds(1))
        }
    }

    /// Removes what was drawn, leaving the cursor where the final output belongs.
    func clear() {
        let erase = state.withLock { state -> String in
            defer { state.linesDrawn = 0 }
            return Self.erase(lines: state.linesDrawn)
        }
        write(erase)
    }

    private func draw(left: Duration) {
        let text = state.withLock { state -> String in
            let devices = state.heard.sorted { ($0.rssi ?? .min, $0.path) > ($1.rssi ?? .min, $1.path) }
            let secondsLeft = Double(left.components.seconds) + Double(left.components.attoseconds) / 1e18
            let seconds = max(0, Int(secondsLeft.rounded(.up)))
            let progress =
                "Scanning on \(adapter): \(seconds) s left, \(devices.count) device"
                + "\(devices.count == 1 ? "" : "s") heard (Ctrl-C stops)"
            let frame = render(devices) + "\n" + progress + "\n"
            defer { state.linesDrawn = frame.reduce(0) { $1 == "\n" ? $0 + 1 : $0 } }
            return Self.erase(lines: state.linesDrawn) + frame
        }
        write(text)
    }

    /// Up `lines` lines to the first column (CSI n F), then clear to the end of the screen (CSI J).
    private static func erase(lines: Int) -> String {
        lines == 0 ? "" : "\u{1B}[\(lines)F\u{1B}[J"
    }

    private func write(_ text: String) {
        guard !text.isEmpty else { return }
        var bytes = Array(text.utf8)
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeMutableBytes { buffer in
                Glibc.write(STDOUT_FILENO, buffer.baseAddress! + offset, buffer.count - offset)
            }
            if written < 0 && errno == EINTR { continue }
            guard written > 0 else { return }
            offset += written
        }
    }
}
