import Foundation
import TestWorld
import Testing

/// The `gattway` command line as a user meets it.
@Suite(.timeLimit(.minutes(5))) struct CommandLineTests {
    static let examples = "\(packageRoot)/schemas/examples"

    static func files(_ kind: String) -> [String] {
        let folder = "\(examples)/\(kind)"
        let names = (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []
        return names.filter { $0.hasSuffix(".yaml") }.sorted().map { "\(folder)/\($0)" }
    }

    @Test func thereAreExamplesToCheck() {
        #expect(Self.files("valid").count >= 6)
        #expect(Self.files("invalid").count >= 10)
    }

    @Test(arguments: files("valid"))
    func checkConfigAcceptsValidExample(_ file: String) async throws {
        let result = try await GattwayBinary.run(["check-config", file])
        #expect(result.status == 0, "\(file): \(result.stderr)")
        let summary =
            "^" + NSRegularExpression.escapedPattern(for: file)
            + #": valid \(\d+ devices?, peripheral (on|off)\)\n$"#
        #expect(result.stdout.range(of: summary, options: .regularExpression) != nil, "stdout: \(result.stdout)")
        #expect(result.stderr.isEmpty, "stderr: \(result.stderr)")
    }

    @Test(arguments: files("invalid"))
    func checkConfigRejectsInvalidExampleWithEveryErrorAndPath(_ file: String) async throws {
        let result = try await GattwayBinary.run(["check-config", file])
        #expect(result.status == 1)
        let expectedPath = String(file.dropLast(".yaml".count)) + ".expected"
        let expected = try String(contentsOfFile: expectedPath, encoding: .utf8)
            .split(separator: "\n").map(String.init).filter { !$0.isEmpty }
        // Exactly the expected errors, one a line, each after the file's name: nothing missing, nothing more.
        let printed = result.stderr.split(separator: "\n").map(String.init)
        #expect(printed == expected.map { "\(file): \($0)" })
        #expect(result.stdout.isEmpty, "stdout: \(result.stdout)")
    }

    @Test func schemaPrintsTheCommittedSchema() async throws {
        let result = try await GattwayBinary.run(["schema"])
        #expect(result.status == 0)
        let committed = try String(contentsOfFile: "\(packageRoot)/schemas/config.schema.json", encoding: .utf8)
        #expect(
            result.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
                == committed.trimmingCharacters(in: .whitespacesAndNewlines))
    }

    @Test func versionIsPrinted() async throws {
        let result = try await GattwayBinary.run(["--version"])
        #expect(result.status == 0)
        // Semantic versioning: MAJOR.MINOR.PATCH with an optional pre-release, and nothing else on the line.
        let semver = #"^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(-[0-9A-Za-z.-]+)?\n$"#
        #expect(result.stdout.range(of: semver, options: .regularExpression) != nil, "stdout: \(result.stdout)")
    }

    @Test func runWithABrokenConfigExitsWithTheErrors() async throws {
        let directory = try makeTemporaryDirectory()
        let path = directory + "/broken.yaml"
        try "mqtt: { url: \"ftp://x\" }\ndevices: [ { name: a/b, address: nope } ]\n".write(
            toFile: path, atomically: true, encoding: .utf8)
        let result = try await GattwayBinary.run(["run", "--config", path])
        #expect(result.status == 2)
        #expect(result.stderr.contains("mqtt.url"))
        #expect(result.stderr.contains("devices[0].address"))
    }
}
