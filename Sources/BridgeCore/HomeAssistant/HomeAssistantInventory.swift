package import BluetoothCore

/// What Home Assistant discovery knows about the devices it announces, kept across restarts (in the state
/// directory) so that a restart announces the same entities before the devices are heard again, and a device whose
/// configuration entry is gone has its discovery cleared.
///
/// Read back from disk it is untrusted: ``reconciled(with:)`` keeps only devices a configured entry still names,
/// and ``sanitized(discoveryPrefix:)`` keeps only bounded discovery topics under the configured prefix.
package struct HomeAssistantInventory: Sendable, Hashable, Codable {
    /// At most this many devices are remembered (the bound on tracked devices is 100,000 at the very most).
    package static let maximumDevices = 100_000
    /// At most this many measurements per device are announced: a hostile advertiser cannot grow the list.
    package static let maximumMeasurementsPerDevice = 64

    /// A measurement seen on `<device>/state`, with what its decoder says of it.
    package struct Measurement: Sendable, Hashable, Codable {
        package enum Kind: String, Sendable, Hashable, Codable {
            case number, bool, text
        }

        package var name: String
        package var kind: Kind
        package var unit: String?
        package var deviceClass: String?
        package var stateClass: String?

        package init(
            name: String, kind: Kind, unit: String? = nil, deviceClass: String? = nil, stateClass: String? = nil
        ) {
            self.name = name
            self.kind = kind
            self.unit = unit
            self.deviceClass = deviceClass
            self.stateClass = stateClass
        }

        package init(_ decoded: DecodedMeasurement) {
            let kind: Kind =
                switch decoded.value {
                case .number: .number
                case .bool: .bool
                case .text: .text
                }
            self.init(
                name: decoded.name, kind: kind, unit: decoded.unit?.description,
                deviceClass: decoded.deviceClass?.description, stateClass: decoded.stateClass?.description)
        }
    }

    /// One device announced to Home Assistant.
    package struct Device: Sendable, Hashable, Codable {
        /// The Bluetooth address, `AA:BB:CC:DD:EE:FF`.
        package var address: String
        /// The `<device>` topic level its values are published under.
        package var topic: String
        /// The configured entry it belongs to (see ``HomeAssistantInventory/entryKey(of:)``).
        package var entry: String
        /// What it calls itself (its advertised or GAP name), when known.
        package var advertisedName: String?
        /// What decodes its advertisements (`bthome`), as a model hint.
        package var format: String?
        package var measurements: [Measurement] = []

        package init(address: String, topic: String, entry: String) {
            self.address = address
            self.topic = topic
            self.entry = entry
        }
    }

    /// By address.
    package private(set) var devices: [String: Device] = [:]
    /// The discovery topics last announced (retained), so that the ones no longer announced are cleared.
    package var announcedTopics: Set<String> = []

    package init() {}

    /// A configured entry's identity across reloads and restarts: its selector and name. An entry whose selector
    /// or name changes is another entry, and the devices of the old one are cleared.
    package static func entryKey(of device: DeviceConfiguration) -> String {
        let selector: String =
            switch device.selector {
            case .address(let address): "address=\(address)"
            case .match(let prefix, let service, let manufacturer):
                "match=\(prefix ?? "")|\(service.map { "\($0)" } ?? "")|\(manufacturer.map { "\($0)" } ?? "")"
            }
        return selector + "|name=\(device.name ?? "")"
    }

    /// The index of the configured entry a remembered device belongs to, if any still does.
    package func configIndex(of device: Device, in configuration: BridgeConfiguration) -> Int? {
        configuration.devices.firstIndex { Self.entryKey(of: $0) == device.entry }
    }

    /// Adds every device configured by address (announced before it is first heard) and drops remembered devices
    /// whose entry is no longer configured. Returns whether anything changed.
    @discardableResult
    package mutating func reconciled(with configuration: BridgeConfiguration) -> Bool {
        let before = devices
        let entries = Set(configuration.devices.map(Self.entryKey(of:)))
        devices = devices.filter { entries.contains($0.value.entry) }
        for device in configuration.devices {
            guard case .address(let address) = device.selector, let topic = device.topicName else { continue }
            let key = address.description
            let entry = Self.entryKey(of: device)
            if devices[key]?.entry != entry || devices[key]?.topic != topic {
                var remembered = Device(address: key, topic: topic, entry: entry)
                remembered.measurements = devices[key]?.entry == entry ? devices[key]?.measurements ?? [] : []
                devices[key] = remembered
            }
        }
        return devices != before
    }

    /// A device matched a configured entry (or was heard under another topic). Returns whether anything changed.
    @discardableResult
    package mutating func deviceTracked(
        address: BluetoothAddress, topic: String, entry: DeviceConfiguration, advertisedName: String?
    ) -> Bool {
        let key = address.description
        let entryKey = Self.entryKey(of: entry)
        var device = devices[key] ?? Device(address: key, topic: topic, entry: entryKey)
        if device.entry != entryKey { device = Device(address: key, topic: topic, entry: entryKey) }
        guard devices[key] != nil || devices.count < Self.maximumDevices else { return false }
        device.topic = topic
        if let advertisedName { device.advertisedName = String(advertisedName.prefix(64)) }
        guard devices[key] != device else { return false }
        devices[key] = device
        return true
    }

    /// A decoder produced measurements for a device. Returns whether one of them is new to discovery (or its
    /// unit or class changed), which calls for announcing again.
    @discardableResult
    package mutating func measurementsSeen(_ decoded: DecodedAdvertisement, address: BluetoothAddress) -> Bool {
        guard var device = devices[address.description] else { return false }
        let before = device
        device.format = decoded.format.rawValue
        for measurement in decoded.measurements where measurement.name != "packet_id" {
            let seen = Measurement(measurement)
            if let index = device.measurements.firstIndex(where: { $0.name == seen.name }) {
                device.measurements[index] = seen
            } else if device.measurements.count < Self.maximumMeasurementsPerDevice {
                device.measurements.append(seen)
            }
        }
        guard device != before else { return false }
        devices[address.description] = device
        return true
    }

    /// Keeps what can be trusted of an inventory read back from disk: bounded names, and discovery topics under
    /// `discoveryPrefix` only (an empty retained message is published to each topic to clear, so a forged file
    /// must not name topics outside discovery).
    package func sanitized(discoveryPrefix: String) -> HomeAssistantInventory {
        var clean = HomeAssistantInventory()
        for (key, device) in devices.prefix(Self.maximumDevices) {
            guard (try? BluetoothAddress(parsing: key)) != nil, device.address == key,
                TopicNaming.problem(withLevelName: device.topic) == nil
            else { continue }
            var kept = device
            kept.advertisedName = device.advertisedName.map { String($0.prefix(64)) }
            kept.format = device.format.map { String($0.prefix(32)) }
            kept.measurements = Array(device.measurements.prefix(Self.maximumMeasurementsPerDevice)).filter {
                !$0.name.isEmpty && $0.name.count <= 64
            }
            clean.devices[key] = kept
        }
        clean.announcedTopics = announcedTopics.filter { topic in
            topic.hasPrefix(discoveryPrefix + "/") && topic.hasSuffix("/config") && topic.utf8.count <= 512
                && !topic.contains("+") && !topic.contains("#") && !topic.contains("\0")
        }
        return clean
    }
}
