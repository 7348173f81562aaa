import Foundation
import TestWorld
import Testing

/// `gattway scan` on a terminal redraws a live table with a progress line; piped, it prints only the final table.
@Suite(.serialized, .timeLimit(.minutes(5))) struct CommandLineLiveScanEndToEndTests {
    static let escape = "\u{1B}["

    /// Runs `gattway <arguments>` on a pseudo-terminal (`script` from util-linux); returns what the terminal got.
    static func onATerminal(
        _ world: CommandLineWorld, _ arguments: [String]
    ) async throws -> (status: Int32, output: String) {
        let command = ([GattwayBinary.path] + arguments).map { "'\($0)'" }.joined(separator: " ")
        let result = try await runToCompletion(
            "script", ["-q", "-f", "-e", "-c", command, "/dev/null"], environment: world.environment,
            timeout: .seconds(90))
        return (result.status, result.stdout.replacingOccurrences(of: "\r", with: ""))
    }

    @Test func onATerminalTheTableIsRedrawnWithProgressThenPrintedOnce() async throws {
        try await CommandLineWorld.start(scenario: "demo.yaml").run { world in
            let result = try await Self.onATerminal(world, ["scan", "--duration", "3"])
            #expect(result.status == 0, "\(result.output)")
            let progress = result.output.split(separator: "\n").filter { $0.contains("s left, ") }
            #expect(progress.contains { $0.hasPrefix("Scanning on hci0: 3 s left, ") }, "\(result.output)")
            let heard = progress.compactMap { line -> Int? in
                guard let range = line.range(of: "s left, ") else { return nil }
                return Int(line[range.upperBound...].prefix { $0.isNumber })
            }
            #expect(heard.contains { $0 >= 2 }, "no frame showed the demo's devices: \(result.output)")
            // Each redraw goes back over the previous frame; the final table comes after the last one.
            #expect(result.output.contains(Self.escape + "J"))
            let final = try #require(result.output.components(separatedBy: Self.escape + "J").last)
            #expect(!final.contains("s left"), "\(final)")
            let lines = final.split(separator: "\n").map(String.init)
            #expect(
                lines.first?.split(separator: " ", omittingEmptySubsequences: true) == [
                    "ADDRESS", "RSSI", "NAME", "DECODED",
                ])
            #expect(lines.contains { $0.hasPrefix("C4:7C:8D:6A:3E:11") && $0.hasSuffix("Polar H10 6A3E11") })
        }
    }

    @Test func pipedTheOutputHasNoEscapeCodesAndNoProgress() async throws {
        try await CommandLineWorld.start(scenario: "demo.yaml").run { world in
            let result = try await world.gattway(["scan", "--duration", "2"])
            #expect(result.status == 0, "\(result.stderr)")
            #expect(!result.stdout.contains("\u{1B}"))
            #expect(!result.stdout.contains("s left"))
            #expect(result.stdout.contains("C4:7C:8D:6A:3E:11"))
        }
    }
}
