import Foundation
import Logging
import TestWorld
import Testing

@testable import PeripheralBridge

@Suite struct PeripheralValueStoreTests {
    @Test func aCorruptValuesFileIsMovedAsideAndReported() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("peripheral-\(UUID())").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try Data(#"{"values":{"0/0":"not base64 but a string"#.utf8)
            .write(to: URL(fileURLWithPath: directory + "/peripheral-values.json"))
        let (logger, log) = RecordingLogHandler.makeLogger()
        let store = PeripheralValueStore(directory: directory, logger: logger)
        #expect(store.load().isEmpty)
        let entries = try FileManager.default.contentsOfDirectory(atPath: directory)
        #expect(entries.contains { $0.hasPrefix("peripheral-values.json.corrupt-") }, "\(entries)")
        #expect(!entries.contains("peripheral-values.json"))
        #expect(log.all.contains { $0.message == "peripheral.values.corrupt" && $0.level == .warning })
    }

    @Test func aValidFileIsRestored() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("peripheral-\(UUID())").path
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let (logger, _) = RecordingLogHandler.makeLogger()
        let store = PeripheralValueStore(directory: directory, logger: logger)
        store.set([1, 2, 3], for: "0/0")
        store.saveIfDirty()
        #expect(PeripheralValueStore(directory: directory, logger: logger).load() == ["0/0": [1, 2, 3]])
    }
}
