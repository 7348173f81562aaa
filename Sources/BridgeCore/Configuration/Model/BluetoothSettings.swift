package import BluetoothCore

/// Validated `bluetooth:` section.
package struct BluetoothSettings: Sendable, Hashable {
    /// The discovery filter passed to `Adapter1.SetDiscoveryFilter`.
    package struct Scan: Sendable, Hashable {
        package enum Transport: String, Sendable, Hashable, CaseIterable {
            case auto, le, bredr
        }

        package var uuids: [BluetoothUUID]
        package var rssi: Int?
        package var pathloss: Int?
        package var duplicates: Bool
        package var pattern: String?
        package var transport: Transport
    }

    package var adapter: String
    package var scan: Scan
    package var maxConcurrentConnects: Int
    package var connectTimeout: Duration
    package var requestTimeout: Duration
    package var maxTrackedDevices: Int
    package var advertMinInterval: Duration
    /// How long advertisement reports may be gathered and handled at once while nothing else arrives (zero: each
    /// as it comes), as configured; nil when not, and then `BridgeConfiguration.advertBatch` picks it.
    package var advertBatch: Duration?
    package var reconnectInitial: Duration
    package var reconnectMax: Duration
    /// How long a device found by a `match` rule may go unheard (and unconnected) before it is let go.
    package var unheardTimeout: Duration = .seconds(ConfigurationDefaults.unheardTimeoutSeconds)
}
