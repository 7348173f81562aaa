import ArgumentParser

/// The `gattway` command: a BLE ⇄ MQTT bridge daemon and its configuration tools (entered through `GattwayMain`).
struct Gattway: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "gattway",
        abstract: "Bridge Bluetooth Low Energy devices (through BlueZ) and MQTT brokers, both ways.",
        version: GattwayVersion.current,
        subcommands: [
            RunCommand.self, CheckConfigCommand.self, SchemaCommand.self, ScanCommand.self, ServicesCommand.self,
            ReadCommand.self, WriteCommand.self, NotifyCommand.self, PairCommand.self, UnpairCommand.self,
        ],
        defaultSubcommand: nil
    )
}

enum GattwayVersion {
    static let current = "0.1.0"
}
