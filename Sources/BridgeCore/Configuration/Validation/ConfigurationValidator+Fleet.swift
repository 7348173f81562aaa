extension ConfigurationValidator {
    /// `fleet:`: only meaningful with a gateway id; pins name configured devices and valid gateway ids.
    mutating func validateFleet(
        _ section: BridgeConfigurationFile.FleetSection?, gatewayID: String?, devices: [DeviceConfiguration]
    ) -> FleetSettings {
        var settings = FleetSettings()
        guard let section else { return settings }
        if gatewayID == nil {
            fail("fleet", "needs mqtt.gateway_id: the ownership protocol runs only for gateways of a fleet")
        }
        if let margin = section.margin {
            settings.margin = range(margin, ConfigurationDefaults.fleetMarginRange, "fleet.margin") ?? settings.margin
        }
        if let hold = section.hold, let duration = duration(hold, "fleet.hold") { settings.hold = duration }
        if let slots = section.connectionSlots {
            settings.connectionSlots =
                range(slots, ConfigurationDefaults.fleetConnectionSlotsRange, "fleet.connection_slots")
                ?? settings.connectionSlots
        }
        let names = Set(devices.compactMap(\.topicName))
        for (device, gateway) in (section.pinned ?? [:]).sorted(by: { $0.key < $1.key }) {
            let path = "fleet.pinned.\(device)"
            guard names.contains(device) else {
                fail(path, "is not the name of a configured device")
                continue
            }
            guard topicLevelName(gateway, path) != nil else { continue }
            settings.pinned[device] = gateway
        }
        return settings
    }
}
