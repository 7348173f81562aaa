import ArgumentParser

struct DBusBenchmark: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "dbus", abstract: "D-Bus call and signal throughput.")
    func run() async throws { throw ValidationError("the D-Bus benchmark is not built yet") }
}
