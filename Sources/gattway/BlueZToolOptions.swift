import ArgumentParser
import BluetoothCore
import BridgeCore

/// The options of every command that talks to BlueZ itself.
struct BlueZToolOptions: ParsableArguments {
    @Option(help: "The Bluetooth adapter to use.")
    var adapter: String = "hci0"

    @Option(
        help: ArgumentHelp(
            "Seconds each step may take: finding the device, connecting, resolving its services, every BlueZ call.",
            valueName: "seconds"))
    var timeout: Double = 20

    @Flag(help: "Print JSON for scripts instead of a table.")
    var json = false

    var stepTimeout: Duration { .milliseconds(Int64(timeout * 1000)) }

    func validate() throws {
        guard timeout > 0, timeout <= 3600 else { throw ValidationError("--timeout must be within 0…3600 seconds") }
        guard adapter.utf8.count <= 32,
            adapter.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 || $0 >= 0x61 && $0 <= 0x7A })
        else { throw ValidationError("--adapter must be an adapter name such as hci0") }
    }
}

/// `--codec C`: how values are shown and how VALUE arguments are turned into bytes (the daemon's codecs).
struct CodecOption: ParsableArguments {
    @Option(
        help: ArgumentHelp(
            "The codec: raw, hex, base64, utf8, an integer such as uint16le*0.01, float32le, battery_level, "
                + "heart_rate_measurement, temperature or humidity.", valueName: "codec"))
    var codec: String = "hex"

    func validate() throws { _ = try parsed() }

    func parsed() throws -> PayloadCodec {
        do { return try PayloadCodec(parsing: codec) } catch { throw ValidationError(error.message) }
    }
}

/// A characteristic named on the command line: `UUID` or `SERVICE/UUID`.
struct CharacteristicName: ExpressibleByArgument, CustomStringConvertible {
    var service: BluetoothUUID?
    var uuid: BluetoothUUID
    let description: String

    init?(argument: String) {
        let parts = argument.split(separator: "/", omittingEmptySubsequences: false)
        switch parts.count {
        case 1:
            guard let uuid = BluetoothUUID(String(parts[0])) else { return nil }
            self.uuid = uuid
        case 2:
            guard let service = BluetoothUUID(String(parts[0])), let uuid = BluetoothUUID(String(parts[1]))
            else { return nil }
            self.service = service
            self.uuid = uuid
        default:
            return nil
        }
        description = argument
    }
}
