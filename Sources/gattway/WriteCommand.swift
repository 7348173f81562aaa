import ArgumentParser
import BlueZ
import BluetoothCore
import BridgeCore

/// `gattway write DEVICE CHARACTERISTIC VALUE`: one GATT write, with response unless told otherwise.
struct WriteCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "write", abstract: "Write a value to a characteristic.")

    @Argument(help: "The device: its address, or a name heard in a scan.")
    var device: String

    @Argument(help: "The characteristic's UUID, or SERVICE/CHARACTERISTIC when several services have it.")
    var characteristic: CharacteristicName

    @Argument(help: "The value, in the codec's text form (hex digits by default).")
    var value: String

    @OptionGroup var codec: CodecOption

    @Flag(help: "Write without response (a Write Command): the device does not answer, errors are not reported.")
    var withoutResponse = false

    @OptionGroup var options: BlueZToolOptions

    func validate() throws { _ = try encodedValue() }

    /// VALUE in the codec; a value the codec cannot represent is refused before anything is written.
    func encodedValue() throws -> [UInt8] {
        do { return try codec.parsed().encode(payload: Array(value.utf8)) } catch let error as CodecError {
            throw ValidationError("VALUE: \(error.message)")
        }
    }

    func run() async throws {
        let bytes = try encodedValue()
        let type: BlueZWriteType = withoutResponse ? .command : .request
        try await reportingFailures {
            let address = try await BlueZTool.with(options) { tool in
                let device = try await tool.device(device)
                try await tool.whileConnected(device) {
                    let found = try await tool.characteristic(characteristic, of: device)
                    try await tool.bluez.writeValue(
                        characteristic: found.path, bytes, type: type, timeout: tool.timeout)
                }
                return device.displayName
            }
            if options.json {
                var writer = JSONWriter(reservingCapacity: 128)
                writer.beginObject()
                writer.field("device", address)
                writer.field("characteristic", characteristic.description)
                writer.field("ok", true)
                writer.field("type", type.rawValue)
                writer.field("hex", Hex.string(bytes))
                writer.endObject()
                print(writer.string)
            } else {
                let size = "\(bytes.count) byte\(bytes.count == 1 ? "" : "s")"
                let how = withoutResponse ? " without response" : ""
                print("wrote \(size) (\(Hex.string(bytes))) to \(characteristic) of \(address)\(how)")
            }
        }
    }
}
