/// What one gateway knows about one device it hears or owns.
struct FleetDeviceRecord: Sendable {
    var kind: FleetDeviceKind
    /// Smoothed signal (exponential moving average of what was heard), dBm.
    var rssi: Double?
    var lastHeard: FleetInstant
    /// When the claim topic was (last) subscribed; nil while the broker is down.
    var subscribedAt: FleetInstant?
    /// The claim every gateway converges on (see ``FleetClaim/supersedes(_:)``).
    var claim: FleetClaim?
    /// This gateway acts as owner: connected (or connecting) and publishing.
    var owning = false
    /// A claim this gateway published and whose echo from the broker it waits for before acting as owner.
    var pending: FleetClaim?
    var pendingSince: FleetInstant?
    /// When this gateway, whose claim won over a live owner's, starts acting as owner.
    var startAt: FleetInstant?
    /// Since when this gateway has heard the device better than the owner by the margin.
    var betterSince: FleetInstant?
    /// Since when the device has had no live owner, as seen here.
    var vacantSince: FleetInstant?
    /// The signal and time of this gateway's last published claim.
    var lastPublished: (rssi: Int?, at: FleetInstant)?

    init(kind: FleetDeviceKind, rssi: Double, lastHeard: FleetInstant) {
        self.kind = kind
        self.rssi = rssi
        self.lastHeard = lastHeard
    }

    var roundedRSSI: Int? { rssi.map { Int($0.rounded()) } }
}
