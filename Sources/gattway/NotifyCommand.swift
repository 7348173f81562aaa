import ArgumentParser
import BlueZ
import BridgeCore
import DBus
import Glibc

/// `gattway notify DEVICE CHARACTERISTIC`: prints notifications (or indications) as they arrive, one line each
/// (one JSON document per line with `--json`), until `--count` values, `--duration` seconds or Ctrl-C.
struct NotifyCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "notify", abstract: "Print a characteristic's notifications as they arrive.")

    @Argument(help: "The device: its address, or a name heard in a scan.")
    var device: String

    @Argument(help: "The characteristic's UUID, or SERVICE/CHARACTERISTIC when several services have it.")
    var characteristic: CharacteristicName

    @Option(help: "Stop after this many notifications.")
    var count: Int?

    @Option(help: ArgumentHelp("Stop after this many seconds.", valueName: "seconds"))
    var duration: Double?

    @OptionGroup var codec: CodecOption
    @OptionGroup var options: BlueZToolOptions

    func validate() throws {
        if let count, count < 1 { throw ValidationError("--count must be at least 1") }
        if let duration, duration <= 0 || duration > 86_400 {
            throw ValidationError("--duration must be within 0…86400 seconds")
        }
    }

    func run() async throws {
        let codec = try codec.parsed()
        let interrupt = InterruptSignal()
        try await reportingFailures {
            try await BlueZTool.with(options) { tool in
                let device = try await tool.device(device)
                try await tool.whileConnected(device) {
                    let found = try await tool.characteristic(characteristic, of: device)
                    // Subscribed before StartNotify, so that the first notification is not missed.
                    let values = try await tool.bus.signals(
                        matching: DBusMatchRule(
                            sender: BlueZName.service, interface: BlueZName.properties, member: "PropertiesChanged",
                            path: found.path, arg0: BlueZName.gattCharacteristic),
                        buffering: .dropNewest(limit: 4096))
                    try await tool.bluez.startNotify(characteristic: found.path, timeout: tool.timeout)
                    do {
                        try await printValues(values, device: device.displayName, codec: codec, interrupt: interrupt)
                    } catch {
                        try? await tool.bluez.stopNotify(characteristic: found.path, timeout: tool.timeout)
                        throw error
                    }
                    try await tool.bluez.stopNotify(characteristic: found.path, timeout: tool.timeout)
                }
            }
        }
    }

    /// Prints values until the count is reached, the duration is over or a signal arrives.
    private func printValues(
        _ values: DBusSignalStream, device: String, codec: PayloadCodec, interrupt: InterruptSignal
    ) async throws {
        let limit = count
        let json = options.json
        let name = characteristic.description
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask {
                var printed = 0
                for await signal in values {
                    guard let value = BlueZClient.loneValue(of: signal) else { continue }
                    print(try Self.line(value, device: device, characteristic: name, codec: codec, json: json))
                    // Each value as it comes, also into a pipe.
                    fflush(nil)
                    printed += 1
                    if let limit, printed >= limit { return }
                }
            }
            if let duration { group.addTask { try await Task.sleep(for: .milliseconds(Int64(duration * 1000))) } }
            group.addTask { await interrupt.received() }
            try await group.next()
            group.cancelAll()
        }
    }

    static func line(
        _ value: [UInt8], device: String, characteristic: String, codec: PayloadCodec, json: Bool
    ) throws -> String {
        guard json else { return try ValueOutput.text(value, codec: codec) }
        var writer = JSONWriter(reservingCapacity: 128)
        writer.beginObject()
        writer.field("device", device)
        writer.field("characteristic", characteristic)
        try ValueOutput.write(value, codec: codec, into: &writer)
        writer.endObject()
        return writer.string
    }
}
