import Foundation

/// The BlueZ simulator (Tests/BlueZSimulator/bluez-sim) running a scenario on its own private bus.
package final class BlueZSimulatorProcess: Sendable {
    package let process: ChildProcess
    /// The private bus's address; clients reach the simulated bluetoothd through `DBUS_SYSTEM_BUS_ADDRESS`.
    package let busAddress: String

    /// Starts the simulator with `scenario` (a path, or a file name under Tests/BlueZSimulator/scenarios/) and waits
    /// until it has printed its bus address, which it does once `org.bluez` is served.
    package init(scenario: String, extraArguments: [String] = [], timeout: Duration = .seconds(120)) async throws {
        let scenarioPath = scenario.contains("/") ? scenario : "\(packageRoot)/Tests/BlueZSimulator/scenarios/\(scenario)"
        let executable = "\(packageRoot)/Tests/BlueZSimulator/bluez-sim"
        guard FileManager.default.isExecutableFile(atPath: executable) else {
            throw TestWorldError("the BlueZ simulator is missing at \(executable)")
        }
        process = try ChildProcess(executable, ["--scenario", scenarioPath] + extraArguments)
        let prefix = "DBUS_SYSTEM_BUS_ADDRESS="
        let line = try await process.waitForLine(timeout: timeout) { $0.hasPrefix(prefix) }
        busAddress = String(line.dropFirst(prefix.count))
    }

    /// Stops the simulator and the bus it started.
    package func stop() async {
        await process.stop()
    }
}
