import ArgumentParser
import BlueZ
import BluetoothCore
import BridgeCore

/// `gattway services DEVICE`: the device's GATT tree (services, characteristics with their flags, descriptors).
struct ServicesCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "services", abstract: "List a device's GATT services, characteristics and descriptors.")

    @Argument(help: "The device: its address, or a name heard in a scan.")
    var device: String

    @OptionGroup var options: BlueZToolOptions

    func run() async throws {
        try await reportingFailures {
            let (address, hierarchy) = try await BlueZTool.with(options) { tool in
                let device = try await tool.device(device)
                let hierarchy = try await tool.whileConnected(device) { try await tool.gattHierarchy(of: device) }
                return (device.displayName, hierarchy)
            }
            print(options.json ? json(address, hierarchy) : tree(hierarchy))
        }
    }

    func tree(_ hierarchy: BlueZGATTHierarchy) -> String {
        var lines: [String] = []
        for service in hierarchy.services {
            lines.append("service \(Self.label(service.uuid))\(service.primary ? "" : " (secondary)")")
            for characteristic in service.characteristics {
                let flags = characteristic.flags.joined(separator: ", ")
                lines.append("  characteristic \(Self.label(characteristic.uuid))  [\(flags)]")
                for descriptor in characteristic.descriptors {
                    lines.append("    descriptor \(Self.label(descriptor.uuid))")
                }
            }
        }
        return lines.isEmpty ? "no GATT services" : lines.joined(separator: "\n")
    }

    /// `180d Heart Rate`, or the full UUID for vendor UUIDs.
    static func label(_ uuid: BluetoothUUID?) -> String {
        guard let uuid else { return "?" }
        return uuid.shortestForm + (uuid.knownName.map { " \($0)" } ?? "")
    }

    func json(_ address: String, _ hierarchy: BlueZGATTHierarchy) -> String {
        var writer = JSONWriter(reservingCapacity: 1024)
        writer.beginObject()
        writer.field("device", address)
        writer.key("services")
        writer.beginArray()
        for service in hierarchy.services {
            writer.beginObject()
            Self.writeUUID(service.uuid, into: &writer)
            writer.field("primary", service.primary)
            writer.key("characteristics")
            writer.beginArray()
            for characteristic in service.characteristics {
                writer.beginObject()
                Self.writeUUID(characteristic.uuid, into: &writer)
                Self.writeFlags(characteristic.flags, into: &writer)
                writer.key("descriptors")
                writer.beginArray()
                for descriptor in characteristic.descriptors {
                    writer.beginObject()
                    Self.writeUUID(descriptor.uuid, into: &writer)
                    Self.writeFlags(descriptor.flags, into: &writer)
                    writer.endObject()
                }
                writer.endArray()
                writer.endObject()
            }
            writer.endArray()
            writer.endObject()
        }
        writer.endArray()
        writer.endObject()
        return writer.string
    }

    static func writeUUID(_ uuid: BluetoothUUID?, into writer: inout JSONWriter) {
        writer.key("uuid")
        if let uuid { writer.value(uuid.description) } else { writer.null() }
        if let name = uuid?.knownName { writer.field("name", name) }
    }

    static func writeFlags(_ flags: [String], into writer: inout JSONWriter) {
        writer.key("flags")
        writer.beginArray()
        for flag in flags { writer.value(flag) }
        writer.endArray()
    }
}
