import ArgumentParser
import BlueZ
import BluetoothCore
import BridgeCore

/// `gattway pair DEVICE [--passkey N]`: pairs (and bonds) with a device, answering bluetoothd as an agent.
struct PairCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "pair",
        abstract: "Pair with a device: Just Works, passkey entry (--passkey) or numeric confirmation.",
        discussion: """
            A passkey the device asks for is taken from --passkey. A number to confirm is accepted when it \
            equals --passkey, or, without --passkey, printed and accepted.
            """)

    @Argument(help: "The device: its address, or a name heard in a scan.")
    var device: String

    @Option(help: ArgumentHelp("The passkey (0…999999) to enter or to confirm.", valueName: "passkey"))
    var passkey: UInt32?

    @OptionGroup var options: BlueZToolOptions

    func validate() throws {
        if let passkey, passkey > 999_999 { throw ValidationError("--passkey must be within 0…999999") }
    }

    func run() async throws {
        try await reportingFailures {
            let address = try await BlueZTool.with(options) { tool in
                let device = try await tool.device(device)
                _ = try await BlueZPairingAgent.export(on: tool.bus, device: device.path, passkey: passkey) {
                    printError("gattway: \($0)")
                }
                try await tool.bluez.registerAgent(
                    path: BlueZPairingAgent.path, capability: .keyboardDisplay, timeout: tool.timeout)
                do {
                    // Pair connects by itself; a link that this command brought up is taken down again.
                    try await tool.bluez.pair(device: device.path, timeout: tool.timeout)
                    if !device.connected {
                        try? await tool.bluez.disconnect(device: device.path, timeout: tool.timeout)
                    }
                } catch {
                    if !device.connected {
                        try? await tool.bluez.disconnect(device: device.path, timeout: tool.timeout)
                    }
                    try? await tool.bluez.unregisterAgent(path: BlueZPairingAgent.path, timeout: tool.timeout)
                    throw error
                }
                try? await tool.bluez.unregisterAgent(path: BlueZPairingAgent.path, timeout: tool.timeout)
                return device.displayName
            }
            if options.json {
                var writer = JSONWriter(reservingCapacity: 64)
                writer.beginObject()
                writer.field("device", address)
                writer.field("paired", true)
                writer.endObject()
                print(writer.string)
            } else {
                print("paired with \(address)")
            }
        }
    }
}
