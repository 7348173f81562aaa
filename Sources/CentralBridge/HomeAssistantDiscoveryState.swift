import BridgeCore
import Logging

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The central bridge's Home Assistant discovery state: the inventory of announced devices (saved in the state
/// directory as `homeassistant.json`) and what was published this run.
struct HomeAssistantDiscoveryState: Sendable {
    /// The builder; nil when the configuration has no `homeassistant:` section.
    var discovery: HomeAssistantDiscovery?
    var inventory = HomeAssistantInventory()
    /// Payloads published this run, by topic: an unchanged discovery message is not published again, except when
    /// Home Assistant or the broker comes back.
    var published: [String: [UInt8]] = [:]
    var loaded = false
    var publishScheduled = false
    var statusSubscribed = false

    /// Reads the inventory saved by an earlier run; a file that does not parse is moved aside and forgotten.
    mutating func load(directory: String, logger: Logger) {
        guard !loaded, let discovery else { return }
        loaded = true
        let path = Self.fileURL(directory: directory).path
        guard let data = FileManager.default.contents(atPath: path) else { return }
        do {
            inventory = try JSONDecoder().decode(HomeAssistantInventory.self, from: data)
                .sanitized(discoveryPrefix: discovery.settings.discoveryPrefix)
        } catch {
            let movedTo = try? StateFile.moveAside(path)
            logger.warning(
                "state.corrupt", metadata: ["path": "\(path)", "moved_to": "\(movedTo ?? "-")", "error": "\(error)"])
        }
    }

    func save(directory: String, logger: Logger) {
        let url = Self.fileURL(directory: directory)
        do {
            try StateFile.save(inventory, to: url)
        } catch {
            logger.warning("state.save.failed", metadata: ["path": "\(url.path)", "error": "\(error)"])
        }
    }

    static func fileURL(directory: String) -> URL {
        URL(fileURLWithPath: directory).appendingPathComponent("homeassistant.json")
    }
}
