/// Whether a device is connected to (and so takes a connection slot) or only listened to.
package enum FleetDeviceKind: Hashable, Sendable {
    /// `always` and `on_demand` devices: the owner connects.
    case connectable
    /// Devices only heard: the owner publishes their adverts and decoded values.
    case passive
}

/// What the ownership state machine is told.
package enum FleetEvent: Hashable, Sendable {
    /// The device was heard at `rssi` dBm: an advertisement, or for the owner a live connection (which counts as
    /// hearing it at its last known signal, since many devices stop advertising while connected).
    case heard(device: String, kind: FleetDeviceKind, rssi: Int)
    /// A message on `<base>/fleet/owner/<device>`; nil when the retained claim was cleared (empty payload).
    case claimObserved(device: String, claim: FleetClaim?)
    /// A message on `<base>/bridge/<gateway>/state`: `online`, or `offline` (the Last Will or a clean stop).
    case gatewayState(gateway: String, online: Bool)
    /// The owner's link to the device failed and did not come back (connect refused, link lost for good).
    case deviceLost(device: String)
    /// The broker connection came up (again): every subscription must be made anew.
    case brokerConnected
    /// The broker connection was lost.
    case brokerDisconnected
    /// Time passed: timers (hold, takeover delay, loss, refresh) are checked.
    case tick
}

/// What the ownership state machine asks its driver to do, in order.
package enum FleetAction: Hashable, Sendable {
    /// Subscribe to `<base>/fleet/owner/<device>` (its retained claim comes with the subscription).
    case subscribeClaim(device: String)
    /// Unsubscribe from it: the device is no longer heard.
    case unsubscribeClaim(device: String)
    /// Publish this claim, retained, at QoS 1, on `<base>/fleet/owner/<device>`.
    case publishClaim(device: String, claim: FleetClaim)
    /// Connect to the device (connectable devices only).
    case connect(device: String)
    /// Disconnect from it.
    case disconnect(device: String)
    /// Start publishing the device's values, availability and state, and executing its `/set` and `/get`.
    case startPublishing(device: String)
    /// Stop all of that: another gateway owns the device now, or nobody.
    case stopPublishing(device: String)
    /// Publish, retained, on `<base>/bridge/<gateway>/sightings`.
    case publishSightings(FleetSightings)
}

/// The payload of `<base>/bridge/<gateway>/sightings`: what this gateway hears, for operators and dashboards.
package struct FleetSightings: Hashable, Sendable {
    package struct Sighting: Hashable, Sendable {
        package var device: String
        package var rssi: Int
        package var owned: Bool

        package init(device: String, rssi: Int, owned: Bool) {
            self.device = device
            self.rssi = rssi
            self.owned = owned
        }
    }

    package var gateway: String
    package var freeSlots: Int
    /// Sorted by device.
    package var devices: [Sighting]

    package init(gateway: String, freeSlots: Int, devices: [Sighting]) {
        self.gateway = gateway
        self.freeSlots = freeSlots
        self.devices = devices
    }
}
