import Foundation
import TestWorld
import Testing

/// The BlueZ simulator on its private bus, and the built `gattway` binary run against it as an operator would.
struct CommandLineWorld: Sendable {
    let simulator: BlueZSimulatorProcess
    let control: SimulatorControl

    static func start(scenario: String) async throws -> CommandLineWorld {
        let simulator = try await BlueZSimulatorProcess(scenario: scenario)
        do {
            return CommandLineWorld(simulator: simulator, control: try await SimulatorControl.connect(to: simulator))
        } catch {
            await simulator.stop()
            throw error
        }
    }

    var environment: [String: String] { ["DBUS_SYSTEM_BUS_ADDRESS": simulator.busAddress] }

    /// Runs `gattway <arguments>` to completion against the simulator.
    func gattway(_ arguments: [String]) async throws -> (status: Int32, stdout: String, stderr: String) {
        try await GattwayBinary.run(arguments, environment: environment, timeout: .seconds(90))
    }

    /// Starts `gattway <arguments>` in the background against the simulator.
    func startGattway(_ arguments: [String]) throws -> ChildProcess {
        try ChildProcess(GattwayBinary.path, arguments, environment: environment)
    }

    func stop() async {
        await control.close()
        await simulator.stop()
    }

    /// Runs `body` and stops the world afterwards, also when `body` fails.
    func run(_ body: (CommandLineWorld) async throws -> Void) async throws {
        do {
            try await body(self)
        } catch {
            await stop()
            throw error
        }
        await stop()
    }
}

/// Parses one JSON document printed by `gattway … --json`, failing the test with the text when it is not JSON.
func parseJSON(_ text: String) throws -> Any {
    let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
    do {
        return try JSONSerialization.jsonObject(with: Data(trimmed.utf8), options: [.fragmentsAllowed])
    } catch {
        throw TestWorldError("not JSON: \(trimmed)")
    }
}

func jsonObject(_ text: String) throws -> [String: Any] {
    guard let object = try parseJSON(text) as? [String: Any] else { throw TestWorldError("not a JSON object: \(text)") }
    return object
}
