import BridgeCore
import Foundation
import Testing

@Suite struct ConfigurationExampleTests {
    @Test func thereAreEnoughExamples() {
        #expect(ExampleFiles.names(in: "valid").count >= 6)
        #expect(ExampleFiles.names(in: "invalid").count >= 10)
    }

    @Test(arguments: ExampleFiles.names(in: "valid"))
    func validExampleLoads(name: String) {
        #expect(throws: Never.self) { try BridgeConfiguration.load(path: ExampleFiles.path("valid", name)) }
    }

    @Test(arguments: ExampleFiles.names(in: "invalid"))
    func invalidExampleFailsWithExactlyTheExpectedErrors(name: String) throws {
        let path = ExampleFiles.path("invalid", name)
        let expectedPath = String(path.dropLast(".yaml".count)) + ".expected"
        var actual: [String] = []
        do {
            _ = try BridgeConfiguration.load(path: path)
        } catch {
            actual = error.errors.map(\.description)
        }
        if ProcessInfo.processInfo.environment["GATTWAY_WRITE_EXPECTED"] == "1" {
            try (actual.joined(separator: "\n") + "\n").write(toFile: expectedPath, atomically: true, encoding: .utf8)
        }
        let expected = try String(contentsOfFile: expectedPath, encoding: .utf8)
            .split(separator: "\n", omittingEmptySubsequences: true).map(String.init)
        #expect(actual == expected)
    }
}
