package import BluetoothCore
package import DBus
package import Logging
package import Polling

/// bluetoothd as the central bridge's `BLECentral`: `BlueZClient`'s operations with D-Bus decoded into
/// `BLECentralEvent`s and every `DBusError` turned into a `BlueZError` here, in one place.
package final class BlueZCentral: BLECentral {
    package let client: BlueZClient

    package init(client: BlueZClient) {
        self.client = client
    }

    package convenience init(connection: DBusConnection, logger: Logger) {
        self.init(client: BlueZClient(connection: connection, logger: logger))
    }

    package func events() -> AsyncStream<BLECentralEvent> {
        client.watch { BlueZDecoding.event($0) }
    }

    package func setValueSink(_ sink: @escaping @Sendable (String, [UInt8]) -> Bool) async throws {
        // The tap lasts as long as the connection, which ends with the process.
        _ = try await mapped { try await client.tapCharacteristicValues(sink) }
    }

    package func setAdvertSink(
        _ sink: @escaping @Sendable (String, [BLEDeviceProperty]) -> Bool
    ) async throws -> BLESinkTimer? {
        // The tap lasts as long as the connection, which ends with the process.
        _ = try await mapped { try await client.tapDeviceAdverts(sink) }
        // The tap runs on the connection's loop: its timers (one timerfd the loop already waits on) run there too.
        let loop = client.connection.loop
        return BLESinkTimer { delay, work in loop.execute(after: delay, work) }
    }

    package func paceAdverts(every interval: Duration?) async {
        await client.connection.paceReading(every: interval)
    }

    package func startDiscovery(adapter: String, filter: BLEDiscoveryFilter) async throws {
        try await mapped {
            try await client.setDiscoveryFilter(adapter: adapter, filter)
            try await client.startDiscovery(adapter: adapter)
        }
    }

    package func stopDiscovery(adapter: String) async throws {
        try await mapped { try await client.stopDiscovery(adapter: adapter) }
    }

    package func removeDevice(adapter: String, device: String) async throws {
        try await mapped { try await client.removeDevice(adapter: adapter, device: device) }
    }

    package func connect(device: String, timeout: Duration) async throws {
        try await mapped { try await client.connect(device: device, timeout: timeout) }
    }

    package func disconnect(device: String, timeout: Duration) async throws {
        try await mapped { try await client.disconnect(device: device, timeout: timeout) }
    }

    package func readValue(characteristic: String, timeout: Duration) async throws -> [UInt8] {
        try await mapped { try await client.readValue(characteristic: characteristic, timeout: timeout) }
    }

    package func writeValue(
        characteristic: String, _ value: [UInt8], withResponse: Bool, timeout: Duration
    ) async throws {
        try await mapped {
            try await client.writeValue(
                characteristic: characteristic, value, type: withResponse ? .request : .command, timeout: timeout)
        }
    }

    package func startNotify(characteristic: String, timeout: Duration) async throws {
        try await mapped { try await client.startNotify(characteristic: characteristic, timeout: timeout) }
    }

    package func acquireNotify(
        characteristic: String, timeout: Duration, loop: PollLoop,
        onBatch: @escaping @Sendable ([[UInt8]]) -> Bool, onClose: @escaping @Sendable (Bool) -> Void
    ) async throws -> any BLENotificationChannel {
        let (fd, mtu) = try await mapped {
            try await client.acquireNotify(characteristic: characteristic, timeout: timeout)
        }
        return NotificationSocket(fd: fd.take(), mtu: mtu, loop: loop, onBatch: onBatch, onClose: onClose)
    }

    package func pair(
        device: String, passkey: UInt32?, timeout: Duration, prompt: @escaping @Sendable (String) -> Void
    ) async throws {
        let connection = client.connection
        let callTimeout = Duration.seconds(10)
        try await mapped {
            // An agent that only bluetoothd may call and that answers only about this device.
            _ = try await BlueZPairingAgent.export(on: connection, device: device, passkey: passkey, show: prompt)
            do {
                try await client.registerAgent(
                    path: BlueZPairingAgent.path, capability: .keyboardDisplay, timeout: callTimeout)
                do {
                    try await client.pair(device: device, timeout: timeout)
                } catch {
                    // Best effort: the pairing already failed, and its error is what the caller must see.
                    try? await client.unregisterAgent(path: BlueZPairingAgent.path, timeout: callTimeout)
                    throw error
                }
                // Best effort: the pairing already failed, and its error is what the caller must see.
                try? await client.unregisterAgent(path: BlueZPairingAgent.path, timeout: callTimeout)
            } catch {
                try? await connection.unexport(path: BlueZPairingAgent.path)  // best effort: the pairing error counts
                throw error
            }
            try? await connection.unexport(path: BlueZPairingAgent.path)  // nothing calls a finished agent
        }
    }

    package func cancelPairing(device: String, timeout: Duration) async throws {
        try await mapped { try await client.cancelPairing(device: device, timeout: timeout) }
    }

    /// Runs `operation`, turning a `DBusError` into the `BlueZError` of the same name and message.
    private func mapped<T: Sendable>(_ operation: () async throws -> T) async throws -> T {
        do {
            return try await operation()
        } catch let error as DBusError {
            throw BlueZError(BlueZErrorName(rawValue: error.name), error.message)
        }
    }
}

extension NotificationSocket: BLENotificationChannel {}
