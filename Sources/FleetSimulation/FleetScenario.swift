package import BridgeCore

/// What a fleet simulation runs: how many gateways and devices, for how long, and what goes wrong.
package struct FleetScenario: Sendable {
    package var gateways = 1_000
    package var devices = 10_000
    package var seed: UInt64 = 1
    /// Simulated time before measuring (the fleet's first claims settle).
    package var warmup: Duration = .seconds(300)
    /// Simulated time measured.
    package var measured: Duration = .seconds(1_800)
    /// A gateway is killed (kill -9: no clean disconnect) this often during the measured time; nil: never.
    package var killEvery: Duration? = .seconds(60)
    /// A killed gateway starts again (with an empty state) this long after.
    package var restartAfter: Duration = .seconds(120)
    /// A gateway is cut off from the broker this often; nil: never.
    package var partitionEvery: Duration? = .seconds(120)
    package var partitionLength: Duration = .seconds(20)
    /// Share of devices that are connected to (the rest are only listened to).
    package var connectableShare = 0.3
    /// Share of devices pinned to one of the gateways that hear them.
    package var pinnedShare = 0.01
    package var connectionSlots = 7
    /// Distance between neighbouring gateways on the grid (m).
    package var gatewaySpacing = 20.0
    package var tick: Duration = .milliseconds(500)
    /// How often each gateway hears each device in range (an advertisement reported by BlueZ).
    package var advertInterval: Duration = .seconds(1)
    /// Share of advertisements not heard.
    package var advertLoss = 0.1
    /// The MQTT keepalive of every gateway.
    package var keepalive: Duration = .seconds(5)
    package var policy = FleetPolicy()

    package init() {}
}
