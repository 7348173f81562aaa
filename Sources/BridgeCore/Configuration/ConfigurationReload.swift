/// What a reload (SIGHUP) changes, worked out from the running and the new configuration.
///
/// Devices are applied live: an entry that is unchanged keeps its tracked peripherals, links and subscriptions
/// (only its position in the list may move); an entry that is removed or changed lets go of its peripherals; a new
/// or changed entry picks up the peripherals that match it. Every other section needs a restart, and a reload that
/// changes one says so and leaves it as it runs.
package struct ConfigurationReload: Sendable, Hashable {
    /// Where each unchanged device entry of the running configuration stands in the new one.
    package let keptDevices: [Int: Int]
    /// Running entries that are gone or changed (by index in the running configuration).
    package let droppedDevices: Set<Int>
    /// New entries, and the new form of changed ones (by index in the new configuration).
    package let addedDevices: Set<Int>
    /// Configuration sections that differ but only take effect after a restart, by their key in the file.
    package let sectionsNeedingRestart: [String]
    /// The configuration to run with: the running one with the new devices.
    package let applied: BridgeConfiguration

    package init(running: BridgeConfiguration, new: BridgeConfiguration) {
        var kept: [Int: Int] = [:]
        var unclaimed = Array(new.devices.indices)
        for (index, device) in running.devices.enumerated() {
            // Identical entries pair up in order, so duplicates (several `match` rules alike) stay distinct.
            if let position = unclaimed.firstIndex(where: { new.devices[$0] == device }) {
                kept[index] = unclaimed.remove(at: position)
            }
        }
        keptDevices = kept
        droppedDevices = Set(running.devices.indices).subtracting(kept.keys)
        addedDevices = Set(unclaimed)
        var restart: [String] = []
        if running.mqtt != new.mqtt { restart.append("mqtt") }
        if running.bluetooth != new.bluetooth { restart.append("bluetooth") }
        if running.peripheral != new.peripheral { restart.append("peripheral") }
        if running.homeAssistant != new.homeAssistant { restart.append("homeassistant") }
        if running.stateDirectory != new.stateDirectory { restart.append("state_dir") }
        if running.logLevel != new.logLevel { restart.append("log_level") }
        if running.fleet != new.fleet { restart.append("fleet") }
        sectionsNeedingRestart = restart
        var applied = running
        applied.devices = new.devices
        self.applied = applied
    }

    /// Whether the reload changes anything that runs.
    package var changesDevices: Bool {
        !droppedDevices.isEmpty || !addedDevices.isEmpty || keptDevices.contains { $0 != $1 }
    }
}
