import ArgumentParser

/// Benchmarks that print Gattway's figures against real daemons (dbus-daemon, mosquitto, the BlueZ simulator).
@main
struct GattwayBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "gattway-bench",
        abstract: "Measure Gattway's throughput, latency and cost against real daemons.",
        subcommands: [
            CompareBenchmark.self, AdvertsBenchmark.self, FleetBenchmark.self, CentralBenchmark.self,
            PeripheralBenchmark.self, DBusBenchmark.self, MQTTBenchmark.self,
        ]
    )
}
