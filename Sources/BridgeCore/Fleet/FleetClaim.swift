/// The retained message on `<base>/fleet/owner/<device>`: which gateway owns the device, in which term.
///
/// A claim with no gateway is a release: the last owner gave the device up, and the term stays so that the next
/// claim is ordered after it.
package struct FleetClaim: Hashable, Sendable {
    /// The owning gateway; nil in a release.
    package var gateway: String?
    /// Raised by one with every change of owner (and every release); never lowered.
    package var term: UInt64
    /// The owner's smoothed signal in dBm when it last published the claim; challengers compare against it.
    package var rssi: Int?
    /// True when the device is pinned to the owner by its configuration: no challenger contests it on signal.
    package var pinned: Bool

    package init(gateway: String?, term: UInt64, rssi: Int? = nil, pinned: Bool = false) {
        self.gateway = gateway
        self.term = term
        self.rssi = rssi
        self.pinned = pinned
    }

    /// A release of the device after `term`.
    package static func release(after term: UInt64) -> FleetClaim { FleetClaim(gateway: nil, term: term + 1) }

    /// Whether every gateway takes this claim over `current`, whatever order the two arrived in.
    ///
    /// A higher term wins. Within one term, a later message from the same gateway replaces its earlier one (MQTT
    /// keeps one client's order); between two gateways that claimed the same term at once, the claim that ranks
    /// higher wins, on every gateway alike: a claim over a release, then pinned, then stronger signal, then the
    /// smaller gateway id.
    package func supersedes(_ current: FleetClaim) -> Bool {
        if term != current.term { return term > current.term }
        if gateway == current.gateway { return true }
        return ranks(above: current)
    }

    private func ranks(above other: FleetClaim) -> Bool {
        guard let gateway else { return false }
        guard let otherGateway = other.gateway else { return true }
        if pinned != other.pinned { return pinned }
        let signal = rssi ?? Int.min
        let otherSignal = other.rssi ?? Int.min
        if signal != otherSignal { return signal > otherSignal }
        return gateway < otherGateway
    }
}

extension FleetClaim {
    /// The succession of owners that a gateway receiving `claims` in this order reckons: each claim that supersedes
    /// the one held replaces it, and every change of the owning gateway (a release included, as nil) is listed.
    /// For operators' tools and tests that read the claim topic: published claims include stale ones that lost.
    package static func owners(reckonedFrom claims: [FleetClaim]) -> [String?] {
        var held: FleetClaim?
        var owners: [String?] = []
        for claim in claims where held.map({ claim.supersedes($0) }) ?? true {
            held = claim
            if owners.isEmpty || owners.last! != claim.gateway { owners.append(claim.gateway) }
        }
        return owners
    }
}
