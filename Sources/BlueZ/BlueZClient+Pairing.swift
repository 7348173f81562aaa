import DBus

/// What an agent can do for pairing (AgentManager1.RegisterAgent's capability, doc/org.bluez.AgentManager.rst).
package enum BlueZAgentCapability: String, Sendable, Hashable {
    case displayOnly = "DisplayOnly"
    case displayYesNo = "DisplayYesNo"
    case keyboardOnly = "KeyboardOnly"
    case noInputNoOutput = "NoInputNoOutput"
    case keyboardDisplay = "KeyboardDisplay"
}

extension BlueZName {
    package static let agentManager = "org.bluez.AgentManager1"
    package static let agent = "org.bluez.Agent1"
    /// Where bluetoothd serves AgentManager1.
    package static let agentManagerPath = "/org/bluez"
}

extension BlueZClient {
    /// Device1.Pair: bluetoothd connects if needed and runs pairing, asking this client's agent (or the default
    /// one) for a passkey or a confirmation. Replies once bonded, or with the Authentication* error.
    package func pair(device: String, timeout: Duration) async throws {
        _ = try await connection.call(
            destination: BlueZName.service, path: device, interface: BlueZName.device, method: "Pair",
            timeout: timeout)
    }

    /// Device1.CancelPairing: stops a pairing in progress (`DoesNotExist` when none is).
    package func cancelPairing(device: String, timeout: Duration) async throws {
        _ = try await connection.call(
            destination: BlueZName.service, path: device, interface: BlueZName.device, method: "CancelPairing",
            timeout: timeout)
    }

    package func registerAgent(path: String, capability: BlueZAgentCapability, timeout: Duration) async throws {
        _ = try await connection.call(
            destination: BlueZName.service, path: BlueZName.agentManagerPath, interface: BlueZName.agentManager,
            method: "RegisterAgent", arguments: [.objectPath(path), .string(capability.rawValue)], timeout: timeout)
    }

    package func unregisterAgent(path: String, timeout: Duration) async throws {
        _ = try await connection.call(
            destination: BlueZName.service, path: BlueZName.agentManagerPath, interface: BlueZName.agentManager,
            method: "UnregisterAgent", arguments: [.objectPath(path)], timeout: timeout)
    }
}
