import BridgeCore
import Foundation
import Testing

@Suite struct StateFileTests {
    @Test func aCorruptFileIsRenamedWithASuffixAndNeverOverwritesAnEarlierOne() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("statefile-\(UUID())").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/central-state.json"
        let now = Date(timeIntervalSince1970: 1_800_000_000)

        try Data("{not json".utf8).write(to: URL(fileURLWithPath: path))
        let first = try StateFile.moveAside(path, now: now)
        #expect(first == path + ".corrupt-20270115T080000Z")
        #expect(!FileManager.default.fileExists(atPath: path))

        try Data("second".utf8).write(to: URL(fileURLWithPath: path))
        let second = try StateFile.moveAside(path, now: now)
        #expect(second == first + "-2")
        #expect(try String(contentsOfFile: first, encoding: .utf8) == "{not json")
        #expect(try String(contentsOfFile: second, encoding: .utf8) == "second")
    }

    @Test func aMissingFileCannotBeMovedAside() {
        #expect(throws: (any Error).self) { try StateFile.moveAside("/nonexistent/gattway/state.json") }
    }
}
