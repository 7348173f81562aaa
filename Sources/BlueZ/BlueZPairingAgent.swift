package import DBus

/// An org.bluez.Agent1 (doc/agent-api.txt) answering bluetoothd during a pairing that this process started:
/// Just Works needs no answer; a passkey to enter comes from `passkey`; a number to confirm is accepted when it
/// equals `passkey`, or, without one, shown through `show` and accepted.
///
/// Only bluetoothd may ask, and only about `device`: calls from any other sender than the owner of `org.bluez` are
/// rejected, so that no other bus client can learn the passkey, and so are requests about other devices (an
/// incoming pairing attempt meanwhile is not this agent's to approve: RequestAuthorization, doc/agent-api.txt).
package struct BlueZPairingAgent: Sendable {
    package static let path = "/org/gattway/agent"

    /// The passkey (0…999999) the user gave, if any.
    package let passkey: UInt32?
    /// The unique name of bluetoothd (the owner of `org.bluez`) when the agent was exported.
    package let bluetoothd: String
    /// The object path of the device being paired.
    package let device: String
    /// Tells the user what bluetoothd asks to display or confirm.
    package let show: @Sendable (String) -> Void

    /// Errors an agent replies with (doc/agent-api.txt).
    package static let rejected = "org.bluez.Error.Rejected"
    package static let canceled = "org.bluez.Error.Canceled"

    /// Exports the agent on `connection` at `path`; registering it with AgentManager1 is the caller's next step.
    package static func export(
        on connection: DBusConnection, device: String, passkey: UInt32?,
        show: @escaping @Sendable (String) -> Void
    ) async throws -> BlueZPairingAgent {
        guard let owner = try await connection.getNameOwner(BlueZName.service) else {
            throw DBusError(name: DBusError.serviceUnknown, message: "bluetoothd (org.bluez) is not on the bus")
        }
        let agent = BlueZPairingAgent(passkey: passkey, bluetoothd: owner, device: device, show: show)
        try await connection.export(path: path, interfaces: [agent.interface])
        return agent
    }

    var interface: DBusInterface {
        DBusInterface(
            name: BlueZName.agent,
            methods: [
                method("Release") { _ in [] },
                method("Cancel") { _ in
                    show("bluetoothd cancelled the pairing request")
                    return []
                },
                method("RequestPasskey", inputs: [DBusArgument("device", "o")], outputs: [DBusArgument("passkey", "u")])
                {
                    _ in
                    guard let passkey else {
                        show("the device asks for a passkey: give it with --passkey")
                        throw Self.refusal("no passkey was given")
                    }
                    return [.uint32(passkey)]
                },
                method("RequestPinCode", inputs: [DBusArgument("device", "o")], outputs: [DBusArgument("pincode", "s")])
                {
                    _ in
                    guard let passkey else {
                        show("the device asks for a PIN code: give it with --passkey")
                        throw Self.refusal("no PIN code was given")
                    }
                    return [.string(String(passkey))]
                },
                method(
                    "DisplayPasskey",
                    inputs: [
                        DBusArgument("device", "o"), DBusArgument("passkey", "u"),
                        DBusArgument("entered", "q"),
                    ]
                ) { call in
                    show("enter passkey \(Self.sixDigits(call.arguments[1].uint32 ?? 0)) on the device")
                    return []
                },
                method("DisplayPinCode", inputs: [DBusArgument("device", "o"), DBusArgument("pincode", "s")]) { call in
                    show("enter PIN code \(call.arguments[1].string ?? "") on the device")
                    return []
                },
                method("RequestConfirmation", inputs: [DBusArgument("device", "o"), DBusArgument("passkey", "u")]) {
                    call in
                    let shown = call.arguments[1].uint32 ?? 0
                    if let passkey, passkey != shown {
                        show(
                            "the device shows passkey \(Self.sixDigits(shown)), not \(Self.sixDigits(passkey)): refused"
                        )
                        throw Self.refusal("the device shows \(Self.sixDigits(shown)), not \(Self.sixDigits(passkey))")
                    }
                    show("confirming passkey \(Self.sixDigits(shown))")
                    return []
                },
                // Pairing that this process asked for needs no further authorization; services are not authorized.
                method("RequestAuthorization", inputs: [DBusArgument("device", "o")]) { _ in [] },
                method("AuthorizeService", inputs: [DBusArgument("device", "o"), DBusArgument("uuid", "s")]) { _ in
                    throw Self.refusal("Gattway authorizes no services")
                },
            ])
    }

    /// A method whose calls are answered only when they come from bluetoothd, and checked for their signature.
    private func method(
        _ name: String, inputs: [DBusArgument] = [], outputs: [DBusArgument] = [],
        _ body: @escaping @Sendable (DBusMethodCall) throws -> [DBusValue]
    ) -> DBusMethod {
        let bluetoothd = self.bluetoothd
        let device = self.device
        return DBusMethod(
            name: name, inputs: inputs, outputs: outputs,
            handler: .sync { call in
                guard call.sender == bluetoothd else {
                    throw Self.refusal("only bluetoothd may call the agent")
                }
                let expected = inputs.map(\.signature).joined()
                guard call.arguments.map(\.signature).joined() == expected else {
                    throw DBusError(name: DBusError.invalidArgs, message: "\(name) takes (\(expected))")
                }
                if let asked = call.arguments.first?.objectPath, asked != device {
                    throw Self.refusal("this agent answers for \(device) only")
                }
                return try body(call)
            })
    }

    static func refusal(_ message: String) -> DBusError { DBusError(name: rejected, message: message) }

    /// `004242`: passkeys are shown with six digits, as devices show them.
    static func sixDigits(_ value: UInt32) -> String {
        let digits = String(value)
        return String(repeating: "0", count: max(0, 6 - digits.count)) + digits
    }
}
