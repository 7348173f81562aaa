import ArgumentParser
import BlueZ
import BluetoothCore
import BridgeCore

/// `gattway scan`: what is advertising nearby, as a table (address, name, RSSI) or one JSON document.
struct ScanCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "scan", abstract: "Scan for Bluetooth LE devices and list what was heard.")

    @Option(help: ArgumentHelp("How long to scan (Ctrl-C stops earlier).", valueName: "seconds"))
    var duration: Double = 10

    @OptionGroup var options: BlueZToolOptions

    func validate() throws {
        guard duration > 0, duration <= 3600 else { throw ValidationError("--duration must be within 0…3600 seconds") }
    }

    var scanDuration: Duration { .milliseconds(Int64(duration * 1000)) }

    func run() async throws {
        try await reportingFailures {
            let interrupt = InterruptSignal()
            let live = !options.json && LiveScanDisplay.standardOutputIsATerminal
            let devices = try await BlueZTool.with(options) { tool in
                if !options.json {
                    printError("Scanning on \(tool.adapterName) for \(scanDuration.formattedSeconds)…")
                }
                guard live else {
                    return try await tool.bluez.scan(
                        adapter: tool.adapterPath, duration: scanDuration, interrupted: { await interrupt.received() })
                }
                return try await scanShowingProgress(tool, interrupt: interrupt)
            }
            print(options.json ? json(devices) : table(devices))
        }
    }

    /// Scans while a live table is redrawn on the terminal; it is removed before the final table is printed.
    private func scanShowingProgress(
        _ tool: BlueZTool, interrupt: InterruptSignal
    ) async throws -> [BlueZDeviceState] {
        let display = LiveScanDisplay(adapter: tool.adapterName, duration: scanDuration) { [self] in table($0) }
        let redraw = Task { await display.run() }
        let result: Result<[BlueZDeviceState], any Error>
        do {
            result = .success(
                try await tool.bluez.scan(
                    adapter: tool.adapterPath, duration: scanDuration, interrupted: { await interrupt.received() },
                    heardSoFar: { display.update($0) }))
        } catch {
            result = .failure(error)
        }
        // The live table goes before the final output (or the error) is printed.
        redraw.cancel()
        await redraw.value
        display.clear()
        return try result.get()
    }

    func table(_ devices: [BlueZDeviceState]) -> String {
        var table = TextTable("ADDRESS", "RSSI", "NAME", "DECODED")
        for device in devices {
            table.add(
                device.displayName, device.rssi.map { "\($0)" } ?? "-", device.name ?? device.alias ?? "",
                Self.decoded(device).map { "\($0.format.rawValue): \($0.summary)" } ?? "")
        }
        return table.rendered + "\n\(devices.count) device\(devices.count == 1 ? "" : "s")"
    }

    /// The shape of the daemon's advert payload (company identifiers in decimal, data in hex), per device.
    func json(_ devices: [BlueZDeviceState]) -> String {
        var writer = JSONWriter(reservingCapacity: 256 * max(1, devices.count))
        writer.beginObject()
        writer.field("adapter", options.adapter)
        writer.key("devices")
        writer.beginArray()
        for device in devices { write(device, into: &writer) }
        writer.endArray()
        writer.endObject()
        return writer.string
    }

    private func write(_ device: BlueZDeviceState, into writer: inout JSONWriter) {
        writer.beginObject()
        writer.field("address", device.displayName)
        if let type = device.addressType { writer.field("address_type", type) }
        writer.key("name")
        if let name = device.name { writer.value(name) } else { writer.null() }
        writer.key("rssi")
        if let rssi = device.rssi { writer.value(Int(rssi)) } else { writer.null() }
        if let txPower = device.txPower { writer.field("tx_power", Int(txPower)) }
        writer.key("uuids")
        writer.beginArray()
        for uuid in device.uuids { writer.value(uuid) }
        writer.endArray()
        writer.key("manufacturer_data")
        writer.beginObject()
        for (id, data) in device.manufacturerData.sorted(by: { $0.key < $1.key }) {
            writer.field(JSONObjectKey(text: String(id)), Hex.string(data))
        }
        writer.endObject()
        writer.key("service_data")
        writer.beginObject()
        for (uuid, data) in device.serviceData.sorted(by: { $0.key < $1.key }) {
            writer.field(JSONObjectKey(text: uuid), Hex.string(data))
        }
        writer.endObject()
        writer.field("connected", device.connected)
        writer.field("paired", device.paired)
        if let decoded = Self.decoded(device) {
            writer.key("decoded")
            writer.rawValue(decoded.stateJSON)
        }
        writer.endObject()
    }

    /// What the passive decoders make of the device's advertisement (`decoder: auto`, no bindkey), if anything.
    static func decoded(_ device: BlueZDeviceState) -> DecodedAdvertisement? {
        guard let address = device.address else { return nil }
        let facts = AdvertisementFacts(
            address: address, manufacturerData: device.manufacturerData, serviceDataByUUIDText: device.serviceData,
            localName: device.name)
        return try? DecoderSelection.auto.decode(facts, context: DecodingContext())
    }
}
