/// A `<base>/bridge/event` message (`schemas/mqtt/bridge-event.schema.json`): something an operator wants to know
/// happened to a device or to the bridge. Absent fields are left out.
package struct BridgeEvent: Encodable, Sendable, Hashable {
    package var type: String
    /// The device's topic name, for device events.
    package var device: String?
    package var reason: String?
    /// A D-Bus error name, or `gattway.Error.<Kind>`.
    package var error: String?
    package var message: String?
    /// `pairing_prompt` from the local peripheral: the remote central and the passkey bluetoothd shows.
    package var central: String?
    package var passkey: String?
    /// `configuration_reloaded`: device topics let go, devices tracked after it, sections that need a restart.
    package var released: [String]?
    package var tracked: Int?
    package var restartNeeded: [String]?

    private enum CodingKeys: String, CodingKey {
        case type, device, reason, error, message, central, passkey, released, tracked
        case restartNeeded = "restart_needed"
    }

    package init(
        type: String, device: String? = nil, reason: String? = nil, error: String? = nil, message: String? = nil
    ) {
        self.type = type
        self.device = device
        self.reason = reason
        self.error = error
        self.message = message
    }

    /// `configuration_reloaded`.
    package static func configurationReloaded(released: [String], tracked: Int, restartNeeded: [String]) -> Self {
        var event = BridgeEvent(type: "configuration_reloaded")
        event.released = released
        event.tracked = tracked
        event.restartNeeded = restartNeeded
        return event
    }

    /// `configuration_invalid`: at most ten of the file's problems, each already a one-line "path: message".
    package static func configurationInvalid(problems: [String]) -> Self {
        BridgeEvent(
            type: "configuration_invalid", error: "gattway.Error.InvalidConfiguration",
            message: problems.prefix(10).joined(separator: "; "))
    }

    package var payload: [UInt8] { JSONPayload.encode(self) }
}

/// `<base>/bridge/info` (`schemas/mqtt/bridge-info.schema.json`): what this gateway is and what it is configured to do.
package struct BridgeInfo: Encodable, Sendable, Hashable {
    package var version: String
    package var gatewayID: String?
    package var baseTopic: String
    package var adapter: String
    /// Each configured device's topic name, `(match)` for entries that name none.
    package var configuredDevices: [String]
    package var peripheral: Bool

    private enum CodingKeys: String, CodingKey {
        case version, adapter, peripheral
        case gatewayID = "gateway_id"
        case baseTopic = "base_topic"
        case configuredDevices = "configured_devices"
    }

    package init(
        version: String, gatewayID: String?, baseTopic: String, adapter: String, configuredDevices: [String],
        peripheral: Bool
    ) {
        self.version = version
        self.gatewayID = gatewayID
        self.baseTopic = baseTopic
        self.adapter = adapter
        self.configuredDevices = configuredDevices
        self.peripheral = peripheral
    }

    package var payload: [UInt8] { JSONPayload.encode(self) }
}
