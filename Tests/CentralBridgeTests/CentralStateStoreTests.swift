import BluetoothCore
import Foundation
import Logging
import TestWorld
import Testing

@testable import CentralBridge

/// The central bridge's state file read back from disk, where anyone with access to the state directory (or a
/// crash mid-write on a broken file system) may have changed it.
@Suite struct CentralStateStoreTests {
    let directory: String

    init() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("central-state-\(UUID())").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    }

    private var statePath: String { directory + "/central-state.json" }

    private func write(_ text: String) throws {
        try Data(text.utf8).write(to: URL(fileURLWithPath: statePath))
    }

    @Test func aCorruptFileIsMovedAsideAndReported() throws {
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try write(##"{"version":1,"devices":{"AA:00:00:00:00:01":{"topic":"#,"##)
        let (logger, log) = RecordingLogHandler.makeLogger()
        let store = CentralStateStore(directory: directory, logger: logger)
        store.load()

        let entries = try FileManager.default.contentsOfDirectory(atPath: directory)
        let movedAside = try #require(entries.first { $0.hasPrefix("central-state.json.corrupt-") })
        #expect(!entries.contains("central-state.json"))
        let warning = try #require(log.all.first { $0.message == "state.corrupt" })
        #expect(warning.level == .warning)
        #expect(warning.metadata["moved_to"] == directory + "/" + movedAside)
        #expect(store.topic(of: BluetoothAddress("AA:00:00:00:00:01")!) == nil)
    }

    @Test func invalidAndSharedRememberedTopicsAreDroppedOnLoad() throws {
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try write(
            """
            {"version":1,"lastValues":{},"devices":{
              "AA:00:00:00:00:01":{"topic":"garden","characteristics":{}},
              "AA:00:00:00:00:02":{"topic":"garden","characteristics":{}},
              "AA:00:00:00:00:03":{"topic":"gattway/#","characteristics":{}},
              "AA:00:00:00:00:04":{"topic":"line\\nbreak","characteristics":{}}}}
            """)
        let (logger, log) = RecordingLogHandler.makeLogger()
        let store = CentralStateStore(directory: directory, logger: logger)
        store.load()
        #expect(store.topic(of: BluetoothAddress("AA:00:00:00:00:01")!) == "garden")
        for dropped in ["AA:00:00:00:00:02", "AA:00:00:00:00:03", "AA:00:00:00:00:04"] {
            #expect(store.topic(of: BluetoothAddress(dropped)!) == nil, "\(dropped)")
        }
        #expect(log.all.filter { $0.message == "state.topic.dropped" }.count == 3)
    }

    @Test func rememberingATopicForgetsAnotherDeviceWithTheSameTopic() throws {
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let (logger, _) = RecordingLogHandler.makeLogger()
        let store = CentralStateStore(directory: directory, logger: logger)
        let first = BluetoothAddress("AA:00:00:00:00:01")!
        let second = BluetoothAddress("AA:00:00:00:00:02")!
        store.remember(address: first, topic: "lock")
        #expect(store.isTopicTaken("lock", byOtherThan: second))
        #expect(!store.isTopicTaken("lock", byOtherThan: first))
        store.remember(address: second, topic: "lock")
        #expect(store.topic(of: first) == nil)
        #expect(store.topic(of: second) == "lock")
        store.save()
        let reloaded = CentralStateStore(directory: directory, logger: logger)
        reloaded.load()
        #expect(reloaded.topic(of: second) == "lock")
        #expect(reloaded.topic(of: first) == nil)
    }

    /// Whether `saveIfDirty` writes the file: it is removed first, so it exists afterwards only when written.
    private func savesSomething(_ store: CentralStateStore) throws -> Bool {
        if FileManager.default.fileExists(atPath: statePath) { try FileManager.default.removeItem(atPath: statePath) }
        store.saveIfDirty()
        return FileManager.default.fileExists(atPath: statePath)
    }

    @Test func aValueTopicThatIsNotRetainedNeverRewritesTheStateFile() throws {
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let (logger, _) = RecordingLogHandler.makeLogger()
        let store = CentralStateStore(directory: directory, logger: logger)
        for value: UInt8 in 1...5 {
            #expect(store.recordPublication(of: [value], on: "gattway/strap/heart_rate", retained: false))
        }
        #expect(
            store.recordPublications(of: [[6], [7]], on: "gattway/strap/heart_rate", retained: false) == [[6], [7]])
        #expect(try !savesSomething(store))
        #expect(store.lastValue(of: "gattway/strap/heart_rate") == nil)
    }

    @Test func aStreamOnOneTopicAmongOthersKeepsEachTopicsRule() throws {
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let (logger, _) = RecordingLogHandler.makeLogger()
        let store = CentralStateStore(directory: directory, logger: logger)
        for value: UInt8 in 1...3 {
            #expect(store.recordPublication(of: [value], on: "gattway/strap/heart_rate", retained: false))
        }
        #expect(store.hasPublished("gattway/strap/heart_rate"))
        #expect(!store.hasPublished("gattway/lock/state"))
        #expect(store.recordPublication(of: Array("lock".utf8), on: "gattway/lock/state", retained: true))
        #expect(store.hasPublished("gattway/lock/state"))
        #expect(try savesSomething(store))
        #expect(store.recordPublication(of: [4], on: "gattway/strap/heart_rate", retained: false))
        #expect(
            store.recordPublications(of: [[5], [6]], on: "gattway/strap/heart_rate", retained: false) == [[5], [6]])
        #expect(store.recordPublication(of: Array("lock".utf8), on: "gattway/lock/state", retained: true))
        #expect(try !savesSomething(store))
        #expect(store.recordPublication(of: Array("unlock".utf8), on: "gattway/lock/state", retained: true))
        #expect(try savesSomething(store))
        #expect(store.lastValue(of: "gattway/lock/state") == Array("unlock".utf8))
        #expect(store.lastValue(of: "gattway/strap/heart_rate") == nil)
    }

    @Test func aRetainedTopicRewritesTheStateFileOnlyWhenItsValueChanges() throws {
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let (logger, _) = RecordingLogHandler.makeLogger()
        let store = CentralStateStore(directory: directory, logger: logger)
        #expect(store.recordPublication(of: Array("lock".utf8), on: "gattway/lock/state", retained: true))
        #expect(try savesSomething(store))
        #expect(store.recordPublication(of: Array("lock".utf8), on: "gattway/lock/state", retained: true))
        #expect(store.recordPublications(of: [Array("lock".utf8)], on: "gattway/lock/state", retained: true).count == 1)
        #expect(try !savesSomething(store))
        #expect(store.recordPublication(of: Array("unlock".utf8), on: "gattway/lock/state", retained: true))
        #expect(try savesSomething(store))

        // A restarted bridge skips the unchanged first value, and that changes nothing to save.
        let restarted = CentralStateStore(directory: directory, logger: logger)
        restarted.load()
        #expect(!restarted.recordPublication(of: Array("unlock".utf8), on: "gattway/lock/state", retained: true))
        #expect(try !savesSomething(restarted))
    }

    @Test func aTopicNoLongerRetainedHasItsRememberedValueDroppedOnce() throws {
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let (logger, _) = RecordingLogHandler.makeLogger()
        let store = CentralStateStore(directory: directory, logger: logger)
        _ = store.recordPublication(of: [1], on: "gattway/meter/power", retained: true)
        store.save()
        let restarted = CentralStateStore(directory: directory, logger: logger)
        restarted.load()
        #expect(restarted.lastValue(of: "gattway/meter/power") == [1])
        #expect(restarted.recordPublication(of: [1], on: "gattway/meter/power", retained: false))
        #expect(restarted.lastValue(of: "gattway/meter/power") == nil)
        #expect(try savesSomething(restarted))
        #expect(restarted.recordPublication(of: [2], on: "gattway/meter/power", retained: false))
        #expect(try !savesSomething(restarted))
    }
}
