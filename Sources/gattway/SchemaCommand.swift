import ArgumentParser

/// `gattway schema`: prints the configuration's JSON Schema (the contract editors use to complete and check it).
struct SchemaCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "schema", abstract: "Print the JSON Schema of the configuration file.")

    func run() {
        print(ConfigurationSchema.json)
    }
}
