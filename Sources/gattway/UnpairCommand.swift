import ArgumentParser
import BlueZ
import BluetoothCore
import BridgeCore

/// `gattway unpair DEVICE`: forgets a paired device (its keys and its object in BlueZ), or cancels a pairing
/// still in progress.
struct UnpairCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "unpair", abstract: "Remove a device's pairing, or cancel a pairing in progress.")

    @Argument(help: "The device: its address, or its name.")
    var device: String

    @OptionGroup var options: BlueZToolOptions

    func run() async throws {
        try await reportingFailures {
            let (address, action) = try await BlueZTool.with(options) { tool in
                let device = try await tool.device(device, discover: false)
                if device.paired {
                    // Adapter1.RemoveDevice drops the bond, disconnects and removes the object.
                    try await tool.bluez.removeDevice(adapter: device.adapterPath, device: device.path)
                    return (device.displayName, "removed")
                }
                do {
                    try await withBlueZErrors {
                        try await tool.bluez.cancelPairing(device: device.path, timeout: tool.timeout)
                    }
                } catch let error as BlueZError where error.name == .doesNotExist {
                    throw ToolFailure("\(device.displayName) is not paired and no pairing is in progress")
                }
                return (device.displayName, "cancelled")
            }
            if options.json {
                var writer = JSONWriter(reservingCapacity: 64)
                writer.beginObject()
                writer.field("device", address)
                writer.field("paired", false)
                writer.field("action", action)
                writer.endObject()
                print(writer.string)
            } else {
                print(action == "removed" ? "removed \(address) and its pairing" : "cancelled pairing with \(address)")
            }
        }
    }
}
