import BluetoothCore
import DBus

/// Runs `operation` against BlueZ, turning a `DBusError` into the `BlueZError` of the same name and message, so
/// that callers outside the BlueZ layer (the command-line tools) see no D-Bus type.
package func withBlueZErrors<T>(_ operation: () async throws -> T) async throws -> T {
    do {
        return try await operation()
    } catch let error as DBusError {
        throw BlueZError(BlueZErrorName(rawValue: error.name), error.message)
    }
}
