import Foundation

/// The host's floor per wake-up, measured in the run by `Benchmarks/adverts/wakes.c`: the CPU time a process spends
/// to sleep and be woken once by data on a socket (a receiver that reads each advertisement as it comes pays one a
/// report) and by a timer (the end of a batching receiver's pause, `epoll_wait`'s timeout). On a virtual machine the
/// two differ by a factor, and either can be most of a receiver's CPU per advertisement at 100 a second.
struct WakeFloor: Sendable {
    /// Microseconds of CPU per wake-up.
    let bySocket: Double
    let byTimer: Double
    /// The interval of the wake-ups measured, in milliseconds.
    let intervalMilliseconds: Int

    static let source = "Benchmarks/adverts/wakes.c"

    /// Builds the probe in `scratch` and runs `count` wake-ups of each kind, `intervalMilliseconds` apart.
    static func measure(
        packageRoot: String, scratch: String, intervalMilliseconds: Int = 10, count: Int = 300
    ) throws -> WakeFloor {
        let binary = scratch + "/wakes"
        _ = try BenchCompiler.compile(
            source: source, output: binary, packages: [], packageRoot: packageRoot, scratch: scratch)
        progress("… the wake-up floor: \(count) wake-ups of each kind, \(intervalMilliseconds) ms apart")
        let outputPath = scratch + "/wakes.out"
        guard FileManager.default.createFile(atPath: outputPath, contents: nil),
            let output = FileHandle(forWritingAtPath: outputPath)
        else { throw BenchError("cannot write \(outputPath)") }
        let (status, errors) = try BenchProcess.runToEnd(
            binary, ["\(intervalMilliseconds)", "\(count)"], output: output)
        try output.close()
        guard status == 0 else { throw BenchError("\(source) failed: \(errors)") }
        let text = try String(contentsOfFile: outputPath, encoding: .utf8)
        return try parse(text, intervalMilliseconds: intervalMilliseconds)
    }

    /// Reads the probe's two lines, `socket <µs>` and `timer <µs>`.
    static func parse(_ text: String, intervalMilliseconds: Int) throws -> WakeFloor {
        var figures: [String: Double] = [:]
        for line in text.split(separator: "\n") {
            let words = line.split(separator: " ")
            if words.count == 2, let value = Double(words[1]), value.isFinite, value >= 0 {
                figures[String(words[0])] = value
            }
        }
        guard let bySocket = figures["socket"], let byTimer = figures["timer"] else {
            throw BenchError("\(source) printed no figures: \(text.prefix(200))")
        }
        return WakeFloor(bySocket: bySocket, byTimer: byTimer, intervalMilliseconds: intervalMilliseconds)
    }
}
