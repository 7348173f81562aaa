import ArgumentParser
import BlueZ
import BridgeCore

/// `gattway read DEVICE CHARACTERISTIC`: one GATT read, shown in the codec.
struct ReadCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "read", abstract: "Read a characteristic's value.")

    @Argument(help: "The device: its address, or a name heard in a scan.")
    var device: String

    @Argument(help: "The characteristic's UUID, or SERVICE/CHARACTERISTIC when several services have it.")
    var characteristic: CharacteristicName

    @OptionGroup var codec: CodecOption
    @OptionGroup var options: BlueZToolOptions

    func run() async throws {
        let codec = try codec.parsed()
        try await reportingFailures {
            let (address, value) = try await BlueZTool.with(options) { tool in
                let device = try await tool.device(device)
                let value = try await tool.whileConnected(device) {
                    let found = try await tool.characteristic(characteristic, of: device)
                    return try await tool.bluez.readValue(characteristic: found.path, timeout: tool.timeout)
                }
                return (device.displayName, value)
            }
            if options.json {
                var writer = JSONWriter(reservingCapacity: 128)
                writer.beginObject()
                writer.field("device", address)
                writer.field("characteristic", characteristic.description)
                writer.field("codec", codec.description)
                try ValueOutput.write(value, codec: codec, into: &writer)
                writer.endObject()
                print(writer.string)
            } else {
                print(try ValueOutput.text(value, codec: codec))
            }
        }
    }
}
