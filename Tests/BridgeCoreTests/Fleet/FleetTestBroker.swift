import BridgeCore

/// A broker for state machine tests: delivers every claim at once to every gateway subscribed to it, in publish
/// order, keeps the retained claim, and records what each gateway was asked to do.
struct FleetTestBroker {
    var gateways: [String: FleetOwnership] = [:]
    var subscriptions: [String: Set<String>] = [:]
    var retained: [String: FleetClaim] = [:]
    var log: [(gateway: String, action: FleetAction)] = []
    var now = FleetInstant(milliseconds: 0)

    init(_ machines: [FleetOwnership]) {
        for machine in machines { gateways[machine.gateway] = machine }
        for name in gateways.keys.sorted() { send(.brokerConnected, to: name) }
    }

    /// Applies `event` to one gateway and carries out its actions (claims are delivered before returning).
    mutating func send(_ event: FleetEvent, to name: String) {
        guard var machine = gateways[name] else { return }
        gateways[name] = nil
        let actions = machine.handle(event, now: now)
        gateways[name] = machine
        for action in actions { perform(action, by: name) }
    }

    mutating func perform(_ action: FleetAction, by name: String) {
        log.append((name, action))
        switch action {
        case .subscribeClaim(let device):
            subscriptions[name, default: []].insert(device)
            if let claim = retained[device] { send(.claimObserved(device: device, claim: claim), to: name) }
        case .unsubscribeClaim(let device):
            subscriptions[name]?.remove(device)
        case .publishClaim(let device, let claim):
            retained[device] = claim
            deliver(claim, of: device)
        default:
            break
        }
    }

    mutating func deliver(_ claim: FleetClaim, of device: String) {
        for name in gateways.keys.sorted() where subscriptions[name]?.contains(device) == true {
            send(.claimObserved(device: device, claim: claim), to: name)
        }
    }

    /// Advances time in steps, each step hearing the device at every gateway with the given signals, then ticking.
    mutating func run(
        for duration: Duration, step: Duration = .milliseconds(500), device: String = "lock",
        kind: FleetDeviceKind = .connectable, signals: (FleetInstant) -> [String: Int]
    ) {
        let end = now + duration
        while now < end {
            now = now + step
            for (name, rssi) in signals(now).sorted(by: { $0.key < $1.key }) {
                send(.heard(device: device, kind: kind, rssi: rssi), to: name)
            }
            for name in gateways.keys.sorted() { send(.tick, to: name) }
        }
    }

    func owners(of device: String) -> [String] {
        gateways.keys.sorted().filter { gateways[$0]!.owns(device) }
    }

    /// How many times the owning gateway of `device` changed to a different one, over the whole log.
    func ownerChanges(of device: String) -> Int {
        var last: String?
        var changes = 0
        for entry in log {
            guard case .startPublishing(let started) = entry.action, started == device else { continue }
            if let last, last != entry.gateway { changes += 1 }
            last = entry.gateway
        }
        return changes
    }
}
