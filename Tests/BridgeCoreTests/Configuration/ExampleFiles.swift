import Foundation

/// Locates `schemas/` in the source tree; the tests read the same examples the JSON Schema check reads.
enum ExampleFiles {
    static let schemasDirectory = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("schemas")

    static func names(in kind: String) -> [String] {
        let directory = schemasDirectory.appendingPathComponent("examples/\(kind)")
        let files = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
        return files.filter { $0.hasSuffix(".yaml") }.sorted()
    }

    static func path(_ kind: String, _ name: String) -> String {
        schemasDirectory.appendingPathComponent("examples/\(kind)/\(name)").path
    }
}
