import Foundation

/// Builds the minimal C programs the benchmarks compare Gattway with (kept under Benchmarks/, never in Sources/),
/// with the system's cc and pkg-config, into a scratch folder at run time.
enum BenchCompiler {
    /// Compiles `source` (relative to the package root) into `output`; returns the command it ran, with the
    /// scratch folder and package root left out so the report shows it as a reader would type it.
    static func compile(source: String, output: String, packages: [String], packageRoot: String, scratch: String) throws
        -> String
    {
        let flags = packages.isEmpty ? "" : " $(pkg-config --cflags --libs \(packages.joined(separator: " ")))"
        let command = "cc -O2 -o '\(output)' '\(packageRoot)/\(source)'\(flags)"
        progress("… compiling \(source): \(command)")
        let (status, errors) = try BenchProcess.runToEnd("sh", ["-c", command])
        guard status == 0 else { throw BenchError("compiling \(source) failed: \(errors)") }
        return command.replacingOccurrences(of: scratch, with: "<scratch>").replacingOccurrences(
            of: packageRoot + "/", with: "")
    }
}
