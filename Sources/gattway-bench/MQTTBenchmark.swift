import ArgumentParser

struct MQTTBenchmark: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "mqtt", abstract: "MQTT publish throughput.")
    func run() async throws { throw ValidationError("the MQTT benchmark is not built yet") }
}
