/// Chooses the `<device>` topic level of a tracked device, given what the configuration fixes and what the state
/// directory remembers.
///
/// The state file is read back from disk, so a remembered topic is untrusted: it is checked like a configured
/// name, it never takes a name the configuration gives another device, and it never makes two devices share a topic.
package struct DeviceTopicAssignment: Sendable {
    /// Names the configuration fixes (friendly names and the addresses of `address:` devices): only the
    /// configured device itself may use one of them.
    package let configuredNames: Set<String>

    package init(configuredNames: Set<String>) {
        self.configuredNames = configuredNames
    }

    /// The topic for a device matched to a configured entry.
    /// - Parameters:
    ///   - configuredName: the entry's `topicName` (its friendly name, or the address of an `address:` entry).
    ///   - selectsByAddress: the entry names exactly this device, so its configured name is always its topic.
    ///   - addressName: the device address as a topic level (12 hex digits), unique per device.
    ///   - remembered: the topic the state file remembers for this address.
    ///   - isTaken: whether another device (tracked now or remembered for another address) uses a topic.
    package func topic(
        configuredName: String?, selectsByAddress: Bool, addressName: String, remembered: String?,
        isTaken: (String) -> Bool
    ) -> String {
        if selectsByAddress, let configuredName { return configuredName }
        if let remembered, isUsableRemembered(remembered, configuredName: configuredName), !isTaken(remembered) {
            return remembered
        }
        let name = configuredName ?? addressName
        if !isTaken(name) { return name }
        return "\(name)_\(addressName)"
    }

    /// A remembered topic is used only when it is a valid topic level and not a name the configuration fixes for
    /// another entry.
    private func isUsableRemembered(_ remembered: String, configuredName: String?) -> Bool {
        guard TopicNaming.problem(withLevelName: remembered) == nil else { return false }
        guard configuredNames.contains(remembered) else { return true }
        return remembered == configuredName
    }

    /// Keeps the remembered topics (address → topic) that are valid topic levels and unique; for a topic that
    /// several addresses claim, the first address in sorted order keeps it. Returns the rest with the reason.
    package static func validatedRemembered(_ topics: [String: String])
        -> (kept: [String: String], dropped: [(address: String, topic: String, reason: String)])
    {
        var kept: [String: String] = [:]
        var owners: [String: String] = [:]
        var dropped: [(address: String, topic: String, reason: String)] = []
        for (address, topic) in topics.sorted(by: { $0.key < $1.key }) {
            if let problem = TopicNaming.problem(withLevelName: topic) {
                dropped.append((address, topic, "topic \(problem)"))
            } else if let owner = owners[topic] {
                dropped.append((address, topic, "topic is already remembered for \(owner)"))
            } else {
                owners[topic] = address
                kept[address] = topic
            }
        }
        return (kept, dropped)
    }
}
