/// Validated `fleet:` section: how this gateway takes part in the ownership protocol (README, "Fleets").
///
/// The protocol runs whenever `mqtt.gateway_id` is set; these values apply then and must be the same on every
/// gateway of a fleet (pins excepted, which only have to agree).
package struct FleetSettings: Sendable, Hashable {
    /// How much stronger (dB) a challenger's smoothed signal must be than the owner's claimed one.
    package var margin: Int = ConfigurationDefaults.fleetMargin
    /// How long a challenger must stay better by `margin` before it claims the device.
    package var hold: Duration = .milliseconds(Int64(ConfigurationDefaults.fleetHoldSeconds * 1000))
    /// How many connectable devices this gateway may own at once.
    package var connectionSlots: Int = ConfigurationDefaults.fleetConnectionSlots
    /// Device name (its topic level) → the gateway it is pinned to.
    package var pinned: [String: String] = [:]

    package init() {}

    /// The pure machine's policy with these settings.
    package var policy: FleetPolicy {
        var policy = FleetPolicy()
        policy.margin = margin
        policy.hold = hold
        return policy
    }
}
