/// One gateway's side of the fleet ownership protocol: which devices it owns, as a pure state machine.
///
/// Events go in with the time they happen at; the actions that come out are for the driver to execute in order
/// (MQTT publishes and subscriptions, connects, starting and stopping publication). No I/O, no clock, no
/// randomness: the same events at the same times always give the same actions, which is what lets the
/// simulator drive a thousand of these over a simulated broker. The protocol is described in the README
/// ("Fleets") and `schemas/mqtt/fleet-owner.schema.json`.
package struct FleetOwnership: Sendable {
    /// This gateway's id, as in `<base>/bridge/<gateway>/state`.
    package let gateway: String
    package let policy: FleetPolicy
    /// How many connectable devices this gateway may own at once.
    package let connectionSlots: Int
    /// Device → the gateway its configuration pins it to.
    package let pins: [String: String]

    var devices: [String: FleetDeviceRecord] = [:]
    /// Gateways whose state topic says `offline`: their claims no longer count.
    var offlineGateways: Set<String> = []
    var brokerConnected = false
    var brokerLostAt: FleetInstant?
    var lastSightings: FleetSightings?
    var lastSightingsAt: FleetInstant?

    package init(
        gateway: String, policy: FleetPolicy = FleetPolicy(), connectionSlots: Int, pins: [String: String] = [:]
    ) {
        self.gateway = gateway
        self.policy = policy
        self.connectionSlots = connectionSlots
        self.pins = pins
    }

    /// Applies one event at `now`; returns what the driver must do, in order.
    package mutating func handle(_ event: FleetEvent, now: FleetInstant) -> [FleetAction] {
        var actions: [FleetAction] = []
        switch event {
        case .heard(let device, let kind, let rssi):
            heard(device, kind: kind, rssi: rssi, now: now, into: &actions)
        case .claimObserved(let device, let claim):
            observe(claim, of: device, now: now, into: &actions)
        case .gatewayState(let other, let online):
            gatewayState(other, online: online, now: now, into: &actions)
        case .deviceLost(let device):
            lost(device, now: now, into: &actions)
        case .brokerConnected:
            brokerUp(now: now, into: &actions)
        case .brokerDisconnected:
            brokerConnected = false
            brokerLostAt = now
        case .tick:
            tick(now: now, into: &actions)
        }
        return actions
    }

    // MARK: Reading the state (for the driver's metrics and the simulator's checks)

    /// The devices this gateway acts as owner of now.
    package var ownedDevices: [String] { devices.filter { $0.value.owning }.map(\.key).sorted() }

    /// Whether this gateway acts as owner of `device`.
    package func owns(_ device: String) -> Bool { devices[device]?.owning ?? false }

    /// Whether `device` was heard within `lostAfter` of `now`.
    package func hears(_ device: String, now: FleetInstant) -> Bool {
        devices[device].map { isHearing($0, now: now) } ?? false
    }

    /// The claim this gateway currently believes in for `device`.
    package func claim(of device: String) -> FleetClaim? { devices[device]?.claim }

    /// Connection slots not taken by owned (or being claimed) connectable devices.
    package var freeSlots: Int {
        connectionSlots
            - devices.values.filter { $0.kind == .connectable && ($0.owning || $0.pending != nil || $0.startAt != nil) }
            .count
    }

    // MARK: Events

    private mutating func heard(
        _ device: String, kind: FleetDeviceKind, rssi: Int, now: FleetInstant, into actions: inout [FleetAction]
    ) {
        if var record = devices[device] {
            let smoothed = record.rssi.map { $0 + policy.smoothing * (Double(rssi) - $0) } ?? Double(rssi)
            record.rssi = smoothed
            record.lastHeard = now
            devices[device] = record
        } else {
            var record = FleetDeviceRecord(kind: kind, rssi: Double(rssi), lastHeard: now)
            if brokerConnected {
                record.subscribedAt = now
                actions.append(.subscribeClaim(device: device))
            }
            devices[device] = record
        }
        evaluate(device, now: now, into: &actions)
    }

    private mutating func observe(
        _ claim: FleetClaim?, of device: String, now: FleetInstant, into actions: inout [FleetAction]
    ) {
        guard var record = devices[device] else { return }
        // A cleared topic is a release that keeps the term already known.
        let incoming = claim ?? FleetClaim(gateway: nil, term: record.claim?.term ?? 0)
        if let current = record.claim, !incoming.supersedes(current) {
            // A rival claim in the same term that loses to this gateway's may still be what the broker retains (it
            // may have arrived there last): the owner settles it with a claim in the next term. Only the same
            // term: a claim of an older term is stale, and answering it could start a race of terms.
            if record.owning, incoming.gateway != gateway, current.gateway == gateway, incoming.term == current.term {
                let reasserted = FleetClaim(
                    gateway: gateway, term: current.term + 1, rssi: record.roundedRSSI, pinned: isPinnedHere(device))
                record.claim = reasserted
                record.lastPublished = (reasserted.rssi, now)
                devices[device] = record
                actions.append(.publishClaim(device: device, claim: reasserted))
            }
            return
        }
        let previousOwner = record.claim?.gateway
        record.claim = incoming
        if incoming.gateway == gateway {
            if record.pending != nil {
                record.pending = nil
                if !record.owning {
                    if let previousOwner, previousOwner != gateway, !offlineGateways.contains(previousOwner) {
                        // Break before make: the previous owner stops when our claim reaches it, which may be a
                        // little after it reached us.
                        record.startAt = now + policy.handoverDelay
                    } else {
                        start(device, &record, now: now, into: &actions)
                    }
                }
            }
            record.lastPublished = (incoming.rssi, now)
        } else {
            record.startAt = nil
            if let pending = record.pending, incoming.term >= pending.term { record.pending = nil }
            if record.owning { stop(device, &record, into: &actions) }
        }
        if incoming.gateway != previousOwner { record.betterSince = nil }
        record.vacantSince = nil
        devices[device] = record
        evaluate(device, now: now, into: &actions)
    }

    private mutating func gatewayState(
        _ other: String, online: Bool, now: FleetInstant, into actions: inout [FleetAction]
    ) {
        guard other != gateway else { return }
        if online { offlineGateways.remove(other) } else { offlineGateways.insert(other) }
        for device in devices.keys.sorted() where devices[device]?.claim?.gateway == other {
            evaluate(device, now: now, into: &actions)
        }
    }

    private mutating func lost(_ device: String, now: FleetInstant, into actions: inout [FleetAction]) {
        guard var record = devices[device], record.owning else { return }
        // Not heard from now on, until it is heard again.
        record.lastHeard = FleetInstant(milliseconds: now.milliseconds - policy.lostAfter.fleetMilliseconds - 1)
        devices[device] = record
        evaluate(device, now: now, into: &actions)
    }

    private mutating func brokerUp(now: FleetInstant, into actions: inout [FleetAction]) {
        brokerConnected = true
        brokerLostAt = nil
        for device in devices.keys.sorted() {
            devices[device]?.subscribedAt = now
            devices[device]?.pending = nil
            devices[device]?.startAt = nil
            actions.append(.subscribeClaim(device: device))
        }
    }

    private mutating func tick(now: FleetInstant, into actions: inout [FleetAction]) {
        if !brokerConnected, let lostAt = brokerLostAt, now.since(lostAt) >= policy.brokerLossGrace {
            // Fenced: others will take over once the Last Will fires; owning on would make two owners.
            for device in devices.keys.sorted() {
                guard var record = devices[device], record.owning else { continue }
                stop(device, &record, into: &actions)
                devices[device] = record
            }
        }
        for device in devices.keys.sorted() {
            evaluate(device, now: now, into: &actions)
        }
        publishSightingsIfDue(now: now, into: &actions)
    }
}
