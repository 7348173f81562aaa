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
        let store = PeripheralValueStore(directory: directory, channelKeys: ["0/0"], logger: logger)
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
        let store = PeripheralValueStore(directory: directory, channelKeys: ["0/0"], logger: logger)
        store.set([1, 2, 3], channel: 0)
        store.saveIfDirty()
        #expect(
            PeripheralValueStore(directory: directory, channelKeys: ["0/0"], logger: logger).load() == [
                "0/0": [1, 2, 3]
            ])
    }

    /// Values are stored by channel; channels with one key share its value, and values of keys the configuration no
    /// longer has are kept through a save, so that changing the configuration back finds them.
    @Test func valuesAreKeptByKeyAcrossConfigurations() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("peripheral-\(UUID())").path
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let (logger, _) = RecordingLogHandler.makeLogger()
        let first = PeripheralValueStore(directory: directory, channelKeys: ["a/1", "a/2"], logger: logger)
        #expect(first.load().isEmpty)
        first.set([1], channel: 0)
        first.set([2], channel: 1)
        first.saveIfDirty()

        // The next configuration drops a/2, adds b/1, and has two channels on a/1.
        let second = PeripheralValueStore(directory: directory, channelKeys: ["b/1", "a/1", "a/1"], logger: logger)
        #expect(second.load() == ["a/1": [1], "a/2": [2]])
        second.set([3], channel: 0)
        second.set([4], channel: 2)
        second.saveIfDirty()
        let third = PeripheralValueStore(directory: directory, channelKeys: ["a/2"], logger: logger)
        #expect(third.load() == ["a/1": [4], "a/2": [2], "b/1": [3]])

        // Nothing changed since the last save: nothing is written.
        try FileManager.default.removeItem(atPath: directory + "/peripheral-values.json")
        second.saveIfDirty()
        #expect(!FileManager.default.fileExists(atPath: directory + "/peripheral-values.json"))
    }
}
