import BridgeCore
import Logging
import Synchronization

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The last value of each local characteristic, kept across restarts in the state directory
/// (`peripheral-values.json`), so that centrals read what they read before a restart even when the source topic's
/// messages are not retained. A retained source message received after the restart still wins: it is newer.
///
/// Values are keyed by service and characteristic UUID, so a configuration that renames or reorders
/// characteristics keeps them. Saved atomically (a whole new file renamed over the old one).
final class PeripheralValueStore: Sendable {
    private struct Snapshot: Codable {
        var version = 1
        /// Key → value, base64.
        var values: [String: String] = [:]
    }

    private struct State {
        /// The value of each configured key, by slot: a value is stored per notification, and an index costs less
        /// than hashing its key (two UUIDs, 73 bytes) each time.
        var bySlot: [[UInt8]?]
        /// Values restored for keys this configuration does not have: kept, and saved again, so that a
        /// configuration changed back finds them.
        var others: [String: [UInt8]] = [:]
        var dirty = false
    }

    private let fileURL: URL
    private let logger: Logger
    /// The configured keys, by slot (each once).
    private let keys: [String]
    /// Each channel's slot (channels with the same key share one).
    private let slotOfChannel: [Int]
    private let state: Mutex<State>

    /// `channelKeys`: each channel's key (``key(service:characteristic:)``), by channel id.
    init(directory: String, channelKeys: [String], logger: Logger) {
        fileURL = URL(fileURLWithPath: directory).appendingPathComponent("peripheral-values.json")
        self.logger = logger
        var keys: [String] = []
        var slots: [String: Int] = [:]
        slotOfChannel = channelKeys.map { key in
            if let slot = slots[key] { return slot }
            slots[key] = keys.count
            keys.append(key)
            return keys.count - 1
        }
        self.keys = keys
        state = Mutex(State(bySlot: Array(repeating: nil, count: keys.count)))
    }

    static func key(service: String, characteristic: String) -> String { "\(service)/\(characteristic)" }

    /// Reads the file; a missing file is an empty store, a damaged one is set aside (not fatal).
    func load() -> [String: [UInt8]] {
        guard let data = try? Data(contentsOf: fileURL) else { return [:] }
        do {
            let snapshot = try JSONDecoder().decode(Snapshot.self, from: data)
            let values = snapshot.values.compactMapValues { Data(base64Encoded: $0).map { [UInt8]($0) } }
            state.withLock { state in
                state.others = values
                for (slot, key) in keys.enumerated() {
                    state.bySlot[slot] = state.others.removeValue(forKey: key)
                }
            }
            logger.info(
                "peripheral.values.restored", metadata: ["count": "\(values.count)", "path": "\(fileURL.path)"])
            return values
        } catch {
            do {
                let movedTo = try StateFile.moveAside(fileURL.path)
                logger.warning(
                    "peripheral.values.corrupt",
                    metadata: ["path": "\(fileURL.path)", "moved_to": "\(movedTo)", "error": "\(error)"])
            } catch let moveError {
                logger.error(
                    "peripheral.values.corrupt.unmovable",
                    metadata: ["path": "\(fileURL.path)", "error": "\(error)", "move.error": "\(moveError)"])
            }
            return [:]
        }
    }

    /// Stores the value of the channel `channel` (its id).
    func set(_ value: [UInt8], channel: Int) {
        let slot = slotOfChannel[channel]
        state.withLock {
            $0.bySlot[slot] = value
            $0.dirty = true
        }
    }

    func saveIfDirty() {
        let values: [String: [UInt8]]? = state.withLock { state in
            guard state.dirty else { return nil }
            state.dirty = false
            var values = state.others
            for (slot, value) in state.bySlot.enumerated() {
                if let value { values[keys[slot]] = value }
            }
            return values
        }
        guard let values else { return }
        do {
            let snapshot = Snapshot(values: values.mapValues { Data($0).base64EncodedString() })
            try StateFile.save(snapshot, to: fileURL)
        } catch {
            state.withLock { $0.dirty = true }
            logger.warning("peripheral.values.save_failed", metadata: ["path": "\(fileURL.path)", "error": "\(error)"])
        }
    }
}
