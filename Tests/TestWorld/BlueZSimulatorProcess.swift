import Foundation

/// The BlueZ simulator (Tests/BlueZSimulator/bluez-sim) running a scenario on its own private bus.
package final class BlueZSimulatorProcess: Sendable {
    package let process: ChildProcess
    /// The private bus's address; clients reach the simulated bluetoothd through `DBUS_SYSTEM_BUS_ADDRESS`.
    package let busAddress: String

    /// Starts the simulator with `scenario` (a path, or a file name under Tests/BlueZSimulator/scenarios/) and waits
    /// until it has printed its bus address, which it does once `org.bluez` is served.
    package convenience init(scenario: String, extraArguments: [String] = [], timeout: Duration = .seconds(120))
        async throws
    {
        let scenarioPath =
            scenario.contains("/") ? scenario : "\(packageRoot)/Tests/BlueZSimulator/scenarios/\(scenario)"
        try await self.init(
            executable: "\(packageRoot)/Tests/BlueZSimulator/bluez-sim", scenarioPath: scenarioPath,
            extraArguments: extraArguments, timeout: timeout)
    }

    /// Starts the simulator launcher at `executable` with the scenario file at `scenarioPath` (none: an empty world
    /// that the control interface fills) and waits until it has printed its bus address.
    package init(
        executable: String, scenarioPath: String?, extraArguments: [String] = [], timeout: Duration = .seconds(120)
    ) async throws {
        guard FileManager.default.isExecutableFile(atPath: executable) else {
            throw TestWorldError("the BlueZ simulator is missing at \(executable)")
        }
        process = try ChildProcess(executable, (scenarioPath.map { ["--scenario", $0] } ?? []) + extraArguments)
        let prefix = "DBUS_SYSTEM_BUS_ADDRESS="
        let line = try await process.waitForLine(timeout: timeout) { $0.hasPrefix(prefix) }
        busAddress = String(line.dropFirst(prefix.count))
    }

    /// The simulator's process id (the Python process: the launcher execs it), whose CPU a benchmark counts.
    package var pid: Int32 { process.pid }

    /// Stops the simulator and the bus it started.
    package func stop() async {
        await process.stop()
    }
}
