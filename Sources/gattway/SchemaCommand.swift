import ArgumentParser

/// `gattway schema`: prints the configuration's JSON Schema (the contract editors use to complete and check it).
struct SchemaCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "schema", abstract: "Print the JSON Schema of the configuration file.")

    func run() {
        // schemas/config.schema.json, embedded at build time (Sources/gattway/Resources links to it).
        print(String(decoding: PackageResources.config_schema_json, as: UTF8.self), terminator: "")
    }
}
