import ArgumentParser
import BlueZ
import BluetoothCore
import BridgeCore

/// A failure of a command, said in one line.
struct ToolFailure: Error, CustomStringConvertible {
    let description: String

    init(_ description: String) { self.description = description }
}

/// Runs a command's body and turns its failure into one line on standard error and exit status 1:
/// BlueZ's and the ATT's errors by name and message (`gattway: org.bluez.Error.Failed: Operation failed with ATT
/// error: 0x80`), exactly as the daemon publishes them.
func reportingFailures(_ body: () async throws -> Void) async throws {
    do {
        try await body()
    } catch let error as BlueZError {
        printError("gattway: \(error)")
        throw ExitCode(1)
    } catch let error as BlueZWaitTimeout {
        printError("gattway: \(error)")
        throw ExitCode(1)
    } catch let error as ToolFailure {
        printError("gattway: \(error)")
        throw ExitCode(1)
    } catch let error as CodecError {
        printError("gattway: \(error.message)")
        throw ExitCode(1)
    }
}
