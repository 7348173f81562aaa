import BridgeCore
import Foundation
import Testing

/// How `BridgeConfiguration.load(path:)` reads the file: in the system's words when it cannot, bounded in size,
/// UTF-8 only, and with the YAML layer's errors as they are.
@Suite struct ConfigurationFileReadingTests {
    /// Writes `bytes` to a new file, passes its path, and removes it.
    private func withFile<Result>(_ bytes: [UInt8], _ body: (String) throws -> Result) throws -> Result {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("gattway-config-\(UUID()).yaml").path
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        defer { try? FileManager.default.removeItem(atPath: path) }
        return try body(path)
    }

    private func messages(loading path: String) -> [String] {
        do {
            _ = try BridgeConfiguration.load(path: path)
            return []
        } catch {
            return error.errors.map(\.description)
        }
    }

    @Test func theSystemSaysWhyAFileCannotBeRead() {
        #expect(
            messages(loading: "/nonexistent/gattway.yaml") == [
                "cannot read /nonexistent/gattway.yaml: No such file or directory"
            ])
        #expect(messages(loading: "/") == ["cannot read /: Is a directory"])
    }

    @Test func aFileOverOneMebibyteIsRefusedUnparsed() throws {
        let comment = Array("# padding\n".utf8)
        let large = Array(repeating: comment, count: (1 << 20) / comment.count + 1).flatMap { $0 }
        try withFile(large) { path in
            #expect(messages(loading: path) == ["cannot read \(path): larger than 1048576 bytes"])
        }
    }

    @Test func aFileThatIsNotUTF8IsRefused() throws {
        try withFile(Array("mqtt: { url: \"mqtt://h\" }\nlog_level: ".utf8) + [0xFF, 0xFE]) { path in
            #expect(messages(loading: path) == ["cannot read \(path): not UTF-8 text"])
        }
    }

    @Test func aFileLoadsAsItsTextDoes() throws {
        let configuration = try withFile(Array("mqtt: { url: \"mqtt://h\", keepalive: 0x1E }\n".utf8)) { path in
            try BridgeConfiguration.load(path: path)
        }
        #expect(configuration.mqtt.keepaliveSeconds == 30)
    }

    @Test func yamlErrorsKeepTheirPositions() throws {
        let found = try withFile(Array("mqtt:\n  url: \"mqtt://h\"\n  url: \"mqtt://i\"\n".utf8)) {
            messages(loading: $0)
        }
        #expect(found == ["YAML error at line 3, column 3: duplicate key \"url\""])
        let twoDocuments = try withFile(Array("mqtt: { url: \"mqtt://h\" }\n---\nmqtt: {}\n".utf8)) {
            messages(loading: $0)
        }
        #expect(twoDocuments == ["YAML error at line 2, column 1: a second document; only one is read"])
    }
}
