/// The metrics of the fleet protocol, by the names the daemon records them under once the central bridge runs
/// ``FleetOwnership``. One list, so that the fleet dashboard (`deploy/grafana/gattway-fleet.json`) can be checked
/// against it before they are recorded.
package enum FleetMetricNames {
    /// Gauge: devices this gateway acts as owner of.
    package static let devicesOwned = "gattway.fleet.devices_owned"
    /// Counter: devices this gateway started owning after another gateway had owned them.
    package static let ownershipChanges = "gattway.fleet.ownership_changes"
    /// Counter: claims (and releases) this gateway published.
    package static let claimsPublished = "gattway.fleet.claims_published"

    package static let all = [devicesOwned, ownershipChanges, claimsPublished]
    /// Which of them are counters (exported with a `_total` suffix).
    package static let counters: Set<String> = [ownershipChanges, claimsPublished]
}
