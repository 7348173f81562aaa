import BluetoothCore
package import DBus

/// The org.bluez.Agent1 (doc/org.bluez.Agent.rst) that answers pairings remote centrals start with the local
/// peripheral. bluetoothd asks the default agent about a pairing it did not start (src/device.c new_auth() →
/// src/agent.c agent_get(NULL)), and refuses the pairing when there is none; so Gattway registers this agent as the
/// default one while it serves characteristics that need an encrypted link.
///
/// Without a configured passkey, Just Works (RequestAuthorization) and numeric comparison (RequestConfirmation)
/// are accepted. With one, only a pairing that proves the passkey is: RequestConfirmation when the number equals
/// it, RequestPasskey answered with it; Just Works, which proves nothing, is refused. A passkey bluetoothd displays
/// (DisplayPasskey) is told through `prompt`, for an operator to read to the person pairing.
///
/// The connection it is exported on must answer only bluetoothd (`restrictExportedObjects(toOwnerOf:)`), so that
/// no other bus client can learn the passkey or approve anything.
package struct BlueZPeripheralAgent: Sendable {
    package static let path = "/org/gattway/peripheral/agent"

    /// What a remote central's pairing asks an operator to see.
    package struct Prompt: Sendable, Equatable {
        /// The central's address, from the device object bluetoothd names.
        package var central: String
        /// Six digits, when bluetoothd shows or compares a passkey.
        package var passkey: String?
        package var message: String
    }

    package let passkey: UInt32?
    package let prompt: @Sendable (Prompt) -> Void

    package init(passkey: UInt32?, prompt: @escaping @Sendable (Prompt) -> Void) {
        self.passkey = passkey
        self.prompt = prompt
    }

    /// KeyboardDisplay lets bluetoothd use every method; what is accepted is decided per request.
    package static let capability = BlueZAgentCapability.keyboardDisplay

    package var interface: DBusInterface {
        DBusInterface(
            name: BlueZName.agent,
            methods: [
                method("Release") { _ in [] },
                method("Cancel") { _ in [] },
                method("RequestAuthorization", inputs: [DBusArgument("device", "o")]) { call in
                    let central = Self.address(call)
                    guard passkey == nil else {
                        prompt(
                            Prompt(
                                central: central,
                                message: "Just Works pairing from \(central) refused: a passkey is configured"))
                        throw BlueZPairingAgent.refusal("a passkey is configured; Just Works proves nothing")
                    }
                    prompt(Prompt(central: central, message: "accepted Just Works pairing from \(central)"))
                    return []
                },
                method("RequestConfirmation", inputs: [DBusArgument("device", "o"), DBusArgument("passkey", "u")]) {
                    call in
                    let central = Self.address(call)
                    let shown = BlueZPairingAgent.sixDigits(call.arguments[1].uint32 ?? 0)
                    if let passkey, passkey != call.arguments[1].uint32 {
                        prompt(
                            Prompt(
                                central: central, passkey: shown,
                                message: "pairing from \(central) refused: \(shown) is not the configured passkey"))
                        throw BlueZPairingAgent.refusal("the passkey does not match")
                    }
                    prompt(
                        Prompt(central: central, passkey: shown, message: "confirmed passkey \(shown) for \(central)"))
                    return []
                },
                method("RequestPasskey", inputs: [DBusArgument("device", "o")], outputs: [DBusArgument("passkey", "u")])
                {
                    call in
                    guard let passkey else {
                        prompt(
                            Prompt(
                                central: Self.address(call),
                                message: "pairing refused: no passkey is configured to enter"))
                        throw BlueZPairingAgent.refusal("no passkey is configured")
                    }
                    return [.uint32(passkey)]
                },
                method("RequestPinCode", inputs: [DBusArgument("device", "o")], outputs: [DBusArgument("pincode", "s")])
                {
                    _ in throw BlueZPairingAgent.refusal("PIN codes are for BR/EDR; the peripheral is LE only")
                },
                method(
                    "DisplayPasskey",
                    inputs: [
                        DBusArgument("device", "o"), DBusArgument("passkey", "u"),
                        DBusArgument("entered", "q"),
                    ]
                ) { call in
                    let central = Self.address(call)
                    let shown = BlueZPairingAgent.sixDigits(call.arguments[1].uint32 ?? 0)
                    prompt(Prompt(central: central, passkey: shown, message: "enter passkey \(shown) on \(central)"))
                    return []
                },
                method("DisplayPinCode", inputs: [DBusArgument("device", "o"), DBusArgument("pincode", "s")]) { _ in
                    throw BlueZPairingAgent.refusal("PIN codes are for BR/EDR; the peripheral is LE only")
                },
                method("AuthorizeService", inputs: [DBusArgument("device", "o"), DBusArgument("uuid", "s")]) { _ in
                    throw BlueZPairingAgent.refusal("Gattway authorizes no services")
                },
            ])
    }

    /// A method whose calls are checked for their signature (the caller is checked by the connection).
    private func method(
        _ name: String, inputs: [DBusArgument] = [], outputs: [DBusArgument] = [],
        _ body: @escaping @Sendable (DBusMethodCall) throws -> [DBusValue]
    ) -> DBusMethod {
        DBusMethod(
            name: name, inputs: inputs, outputs: outputs,
            handler: .sync { call in
                let expected = inputs.map(\.signature).joined()
                guard call.arguments.map(\.signature).joined() == expected else {
                    throw DBusError(name: DBusError.invalidArgs, message: "\(name) takes (\(expected))")
                }
                return try body(call)
            })
    }

    /// `/org/bluez/hci0/dev_C0_FF_EE_00_00_02` → `C0:FF:EE:00:00:02`; the path itself when it names no address.
    static func address(_ call: DBusMethodCall) -> String {
        let path = call.arguments.first?.objectPath ?? ""
        guard let last = path.split(separator: "/").last, last.hasPrefix("dev_") else { return path }
        let text = String(last.dropFirst(4).map { $0 == "_" ? ":" : $0 })
        return BluetoothAddress(text)?.description ?? path
    }
}
