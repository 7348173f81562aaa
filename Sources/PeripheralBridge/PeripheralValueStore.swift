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
        var values: [String: [UInt8]] = [:]
        var dirty = false
    }

    private let fileURL: URL
    private let logger: Logger
    private let state = Mutex(State())

    init(directory: String, logger: Logger) {
        fileURL = URL(fileURLWithPath: directory).appendingPathComponent("peripheral-values.json")
        self.logger = logger
    }

    static func key(service: String, characteristic: String) -> String { "\(service)/\(characteristic)" }

    /// Reads the file; a missing file is an empty store, a damaged one is set aside (not fatal).
    func load() -> [String: [UInt8]] {
        guard let data = try? Data(contentsOf: fileURL) else { return [:] }
        do {
            let snapshot = try JSONDecoder().decode(Snapshot.self, from: data)
            let values = snapshot.values.compactMapValues { Data(base64Encoded: $0).map { [UInt8]($0) } }
            state.withLock { $0.values = values }
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

    func set(_ value: [UInt8], for key: String) {
        state.withLock {
            $0.values[key] = value
            $0.dirty = true
        }
    }

    func saveIfDirty() {
        let values: [String: [UInt8]]? = state.withLock { state in
            guard state.dirty else { return nil }
            state.dirty = false
            return state.values
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
