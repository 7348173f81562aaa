import BluetoothCore
import BridgeCore
import Logging
import Synchronization

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// What the central bridge remembers across restarts: known devices (address → topic), their resolved
/// characteristics, and the last value of each retained value topic, saved atomically in the state directory.
///
/// The last values let a restarted bridge skip republishing a retained value that did not change, so restarts do
/// not re-flood retained topics.
final class CentralStateStore: Sendable {
    private struct Snapshot: Codable {
        var version = 1
        var devices: [String: KnownDevice] = [:]
        var lastValues: [String: String] = [:]
    }

    private struct KnownDevice: Codable {
        var topic: String
        var characteristics: [String: String] = [:]
    }

    private struct State {
        var snapshot = Snapshot()
        var lastValues: [String: [UInt8]] = [:]
        var publishedThisRun: Set<String> = []
        /// The topic last recorded as not retained (it is in `publishedThisRun` then): a stream of values on one
        /// topic, the hot path, skips hashing it into the set again for each value.
        var lastUnretainedTopic: String?
        var dirty = false

        /// A publication on a topic that is not retained: nothing is remembered, and a topic that is no longer
        /// retained (its configuration changed) has its remembered value dropped, the first time this run.
        mutating func recordUnretained(_ topic: String) {
            guard topic != lastUnretainedTopic else { return }
            if publishedThisRun.insert(topic).inserted, lastValues.removeValue(forKey: topic) != nil { dirty = true }
            lastUnretainedTopic = topic
        }
    }

    private let fileURL: URL
    private let logger: Logger
    private let state = Mutex(State())

    init(directory: String, logger: Logger) {
        fileURL = URL(fileURLWithPath: directory).appendingPathComponent("central-state.json")
        self.logger = logger
    }

    func load() {
        guard let data = try? Data(contentsOf: fileURL) else { return }
        do {
            var snapshot = try JSONDecoder().decode(Snapshot.self, from: data)
            let (_, dropped) = DeviceTopicAssignment.validatedRemembered(snapshot.devices.mapValues(\.topic))
            for entry in dropped {
                logger.warning(
                    "state.topic.dropped",
                    metadata: [
                        "device.address": "\(entry.address)", "device.name": "\(entry.topic.debugDescription)",
                        "reason": "\(entry.reason)",
                    ])
                snapshot.devices[entry.address] = nil
            }
            let values = snapshot.lastValues.compactMapValues { Data(base64Encoded: $0).map { [UInt8]($0) } }
            state.withLock {
                $0.snapshot = snapshot
                $0.lastValues = values
            }
            logger.info(
                "state.restored", metadata: ["devices": "\(snapshot.devices.count)", "path": "\(fileURL.path)"])
        } catch {
            // A damaged state file is set aside, not fatal: the bridge starts afresh.
            do {
                let movedTo = try StateFile.moveAside(fileURL.path)
                logger.warning(
                    "state.corrupt",
                    metadata: ["path": "\(fileURL.path)", "moved_to": "\(movedTo)", "error": "\(error)"])
            } catch let moveError {
                logger.error(
                    "state.corrupt.unmovable",
                    metadata: ["path": "\(fileURL.path)", "error": "\(error)", "move.error": "\(moveError)"])
            }
        }
    }

    func topic(of address: BluetoothAddress) -> String? {
        state.withLock { $0.snapshot.devices[address.description]?.topic }
    }

    /// Whether a device other than `address` is remembered with `topic`.
    func isTopicTaken(_ topic: String, byOtherThan address: BluetoothAddress) -> Bool {
        state.withLock { $0.snapshot.devices.contains { $0.key != address.description && $0.value.topic == topic } }
    }

    /// Remembers `topic` for `address`; another address remembered with the same topic is forgotten, so that the
    /// file never gives two devices one topic.
    func remember(address: BluetoothAddress, topic: String) {
        state.withLock {
            guard $0.snapshot.devices[address.description]?.topic != topic else { return }
            for (other, known) in $0.snapshot.devices where known.topic == topic { $0.snapshot.devices[other] = nil }
            $0.snapshot.devices[address.description, default: KnownDevice(topic: topic)].topic = topic
            $0.dirty = true
        }
    }

    func rememberCharacteristics(of address: BluetoothAddress, paths: [String: String]) {
        state.withLock {
            guard $0.snapshot.devices[address.description]?.characteristics != paths else { return }
            $0.snapshot.devices[address.description]?.characteristics = paths
            $0.dirty = true
        }
    }

    func forget(address: BluetoothAddress) {
        state.withLock {
            $0.snapshot.devices[address.description] = nil
            $0.dirty = true
        }
    }

    func lastValue(of topic: String) -> [UInt8]? { state.withLock { $0.lastValues[topic] } }

    func setLastValue(_ value: [UInt8], of topic: String) {
        state.withLock {
            $0.lastValues[topic] = value
            $0.dirty = true
        }
    }

    func hasPublished(_ topic: String) -> Bool { state.withLock { $0.publishedThisRun.contains(topic) } }
    func markPublished(_ topic: String) { _ = state.withLock { $0.publishedThisRun.insert(topic) } }

    /// Marks `topic` published this run and records `value` as its last value. False for a `retained` topic's first
    /// value this run when it equals the one remembered from the last run: the broker still holds it, so a restart
    /// does not republish it.
    ///
    /// Only a retained topic's last value is remembered, and only a changed one makes the state dirty: the state
    /// file is rewritten (and synced) at most every 2 s while it is dirty, and a value topic that is not retained,
    /// or a sensor repeating one reading, would otherwise rewrite it every 2 s for nothing.
    func recordPublication(of value: [UInt8], on topic: String, retained: Bool) -> Bool {
        // The rule of `recordPublications`, without a batch around one value (this is the StartNotify hot path).
        state.withLock { state in
            guard retained else {
                state.recordUnretained(topic)
                return true
            }
            let first = state.publishedThisRun.insert(topic).inserted
            let unchanged = state.lastValues[topic] == value
            if !unchanged {
                state.lastValues[topic] = value
                state.dirty = true
            }
            return !(first && unchanged)
        }
    }

    /// `recordPublication` for a batch, under one lock: the values to publish, in order.
    func recordPublications(of values: [[UInt8]], on topic: String, retained: Bool) -> ArraySlice<[UInt8]> {
        guard !values.isEmpty else { return [] }
        return state.withLock { state in
            guard retained else {
                state.recordUnretained(topic)
                return values[...]
            }
            let first = state.publishedThisRun.insert(topic).inserted
            let skipFirst = first && state.lastValues[topic] == values[0]
            if state.lastValues[topic] != values[values.count - 1] {
                state.lastValues[topic] = values[values.count - 1]
                state.dirty = true
            }
            return values[(skipFirst ? 1 : 0)...]
        }
    }

    func saveIfDirty() {
        if state.withLock({ $0.dirty }) { save() }
    }

    /// Writes the state to a temporary file and renames it over the old one, so a crash never leaves half a file.
    func save() {
        let snapshot: Snapshot = state.withLock {
            $0.dirty = false
            var snapshot = $0.snapshot
            snapshot.lastValues = $0.lastValues.mapValues { Data($0).base64EncodedString() }
            return snapshot
        }
        do {
            try StateFile.save(snapshot, to: fileURL)
        } catch {
            state.withLock { $0.dirty = true }
            logger.warning("state.save.failed", metadata: ["path": "\(fileURL.path)", "error": "\(error)"])
        }
    }
}
