import BridgeCore

/// A fleet of gateways, each running the real ``FleetOwnership`` state machine, over a ``SimulatedBroker`` and a
/// ``FleetRadio``, with gateways killed, restarted and cut off from the broker. Deterministic for a seed.
package final class FleetWorld {
    enum Wire: Sendable {
        case claim(device: Int, FleetClaim?)
        case state(gateway: Int, online: Bool)
        case sightings
    }

    enum Event {
        case tick(gateway: Int, life: Int)
        case kill
        case restart(gateway: Int)
        case partition
        case noticeBrokerLoss(gateway: Int, life: Int)
        case heal(gateway: Int, life: Int)
        case startMeasuring
    }

    struct Gateway {
        var machine: FleetOwnership?
        /// Raised by every kill, so that events of an earlier life are dropped.
        var life = 0
        var ticks = 0
        var partitioned = false
        /// Whether the gateway believes it is connected to the broker.
        var online = false
    }

    let scenario: FleetScenario
    let broker: SimulatedBroker<Wire>
    var random: SeededRandom
    var radio: FleetRadio
    var queue = SimulationQueue<Event>()
    var gateways: [Gateway]
    let gatewayNames: [String]
    let deviceNames: [String]
    let deviceIndex: [String: Int]
    let kinds: [FleetDeviceKind]
    let pins: [String: String]
    var tally: FleetTally
    let base = "gattway"

    package init(_ scenario: FleetScenario) {
        self.scenario = scenario
        random = SeededRandom(seed: scenario.seed)
        broker = SimulatedBroker(seed: scenario.seed &+ 1, keepalive: scenario.keepalive.fleetMilliseconds)
        radio = FleetRadio(scenario: scenario, random: &random)
        gatewayNames = (0..<scenario.gateways).map { "g\($0)" }
        deviceNames = (0..<scenario.devices).map { "d\($0)" }
        deviceIndex = Dictionary(uniqueKeysWithValues: deviceNames.enumerated().map { ($1, $0) })
        var kinds: [FleetDeviceKind] = []
        var pins: [String: String] = [:]
        for device in 0..<scenario.devices {
            kinds.append(random.real(in: 0...1) < scenario.connectableShare ? .connectable : .passive)
            let hearers = radio.gatewaysByDevice[device]
            if !hearers.isEmpty, random.real(in: 0...1) < scenario.pinnedShare {
                pins["d\(device)"] = "g\(hearers[Int(random.integer(in: 0...Int64(hearers.count - 1)))])"
            }
        }
        self.kinds = kinds
        self.pins = pins
        gateways = Array(repeating: Gateway(), count: scenario.gateways)
        tally = FleetTally(devices: scenario.devices)
    }

    /// Runs the scenario to its end and returns what was measured.
    package func run() -> FleetOutcome {
        let warmup = scenario.warmup.fleetMilliseconds
        let end = warmup + scenario.measured.fleetMilliseconds
        for gateway in gateways.indices {
            // Gateways start within the first ten seconds, not all in the same millisecond.
            start(gateway, at: random.integer(in: 0...10_000))
        }
        queue.schedule(.startMeasuring, at: warmup)
        if let every = scenario.killEvery?.fleetMilliseconds {
            var time = warmup + every / 2
            while time < end {
                queue.schedule(.kill, at: time)
                time += every
            }
        }
        if let every = scenario.partitionEvery?.fleetMilliseconds {
            var time = warmup + every / 3
            while time < end {
                queue.schedule(.partition, at: time)
                time += every
            }
        }
        while true {
            let brokerNext = broker.nextTime ?? .max
            let worldNext = queue.nextTime ?? .max
            let next = min(brokerNext, worldNext)
            guard next <= end else { break }
            if brokerNext <= worldNext {
                if let delivery = broker.step() { receive(delivery) }
            } else if let (time, event) = queue.popNext() {
                handle(event, at: time)
            }
        }
        return tally.finish(at: end, world: self)
    }

    // MARK: Gateways

    func start(_ gateway: Int, at now: Int64) {
        gateways[gateway].machine = FleetOwnership(
            gateway: gatewayNames[gateway], policy: scenario.policy, connectionSlots: scenario.connectionSlots,
            pins: pins)
        connect(gateway, at: now)
        queue.schedule(.tick(gateway: gateway, life: gateways[gateway].life), at: now + scenario.tick.fleetMilliseconds)
    }

    func connect(_ gateway: Int, at now: Int64) {
        let state = "\(base)/bridge/\(gatewayNames[gateway])/state"
        broker.connect(
            gateway,
            will: SimulatedMessage(topic: state, payload: .state(gateway: gateway, online: false), retain: true),
            at: now)
        broker.publish(
            SimulatedMessage(topic: state, payload: .state(gateway: gateway, online: true), retain: true),
            from: gateway, at: now)
        broker.subscribe("\(base)/bridge/+/state", from: gateway, at: now)
        gateways[gateway].online = true
        apply(.brokerConnected, to: gateway, at: now)
    }

    func apply(_ event: FleetEvent, to gateway: Int, at now: Int64) {
        guard var machine = gateways[gateway].machine else { return }
        // Taken out while it changes, so that its dictionaries are not copied on write.
        gateways[gateway].machine = nil
        let actions = machine.handle(event, now: FleetInstant(milliseconds: now))
        gateways[gateway].machine = machine
        for action in actions { perform(action, by: gateway, at: now) }
    }

    func perform(_ action: FleetAction, by gateway: Int, at now: Int64) {
        switch action {
        case .subscribeClaim(let device):
            broker.subscribe("\(base)/fleet/owner/\(device)", from: gateway, at: now)
        case .unsubscribeClaim(let device):
            broker.unsubscribe("\(base)/fleet/owner/\(device)", from: gateway, at: now)
        case .publishClaim(let device, let claim):
            guard let index = deviceIndex[device] else { return }
            tally.published(claim)
            broker.publish(
                SimulatedMessage(
                    topic: "\(base)/fleet/owner/\(device)", payload: .claim(device: index, claim), retain: true),
                from: gateway, at: now)
        case .publishSightings:
            tally.publishedSightings()
            broker.publish(
                SimulatedMessage(
                    topic: "\(base)/bridge/\(gatewayNames[gateway])/sightings", payload: .sightings, retain: true),
                from: gateway, at: now)
        case .startPublishing(let device):
            if let index = deviceIndex[device] { tally.ownerStarted(index, by: gateway, at: now, world: self) }
        case .stopPublishing(let device):
            if let index = deviceIndex[device] { tally.ownerStopped(index, by: gateway, at: now) }
        case .connect, .disconnect:
            break
        }
    }

    func receive(_ delivery: SimulatedDelivery<Wire>) {
        guard let payload = delivery.message.payload else { return }
        switch payload {
        case .claim(let device, let claim):
            apply(.claimObserved(device: deviceNames[device], claim: claim), to: delivery.client, at: delivery.time)
        case .state(let gateway, let online):
            if !online { tally.willSeen(of: gateway, at: delivery.time) }
            apply(.gatewayState(gateway: gatewayNames[gateway], online: online), to: delivery.client, at: delivery.time)
        case .sightings:
            break
        }
    }

    // MARK: World events

    func handle(_ event: Event, at now: Int64) {
        switch event {
        case .tick(let gateway, let life):
            guard gateways[gateway].life == life, gateways[gateway].machine != nil else { return }
            gateways[gateway].ticks += 1
            let samplingEvery = max(1, scenario.advertInterval.fleetMilliseconds / scenario.tick.fleetMilliseconds)
            if gateways[gateway].ticks % Int(samplingEvery) == 0 {
                for (device, rssi) in radio.sample(gateway: gateway, loss: scenario.advertLoss, random: &random) {
                    apply(.heard(device: deviceNames[device], kind: kinds[device], rssi: rssi), to: gateway, at: now)
                }
            }
            apply(.tick, to: gateway, at: now)
            queue.schedule(.tick(gateway: gateway, life: life), at: now + scenario.tick.fleetMilliseconds)
        case .kill:
            guard let victim = randomGateway(where: { $0.machine != nil && !$0.partitioned }) else { return }
            tally.killed(victim, at: now, world: self)
            broker.kill(victim, at: now)
            gateways[victim].machine = nil
            gateways[victim].online = false
            gateways[victim].life += 1
            queue.schedule(.restart(gateway: victim), at: now + scenario.restartAfter.fleetMilliseconds)
        case .restart(let gateway):
            start(gateway, at: now)
        case .partition:
            guard let victim = randomGateway(where: { $0.machine != nil && !$0.partitioned }) else { return }
            tally.partitions += 1
            gateways[victim].partitioned = true
            broker.partition(victim, at: now)
            let keepalive = scenario.keepalive.fleetMilliseconds
            let life = gateways[victim].life
            queue.schedule(
                .noticeBrokerLoss(gateway: victim, life: life),
                at: now + random.integer(in: keepalive...(keepalive * 3 / 2)))
            queue.schedule(.heal(gateway: victim, life: life), at: now + scenario.partitionLength.fleetMilliseconds)
        case .noticeBrokerLoss(let gateway, let life):
            guard gateways[gateway].life == life else { return }
            gateways[gateway].online = false
            apply(.brokerDisconnected, to: gateway, at: now)
            if !gateways[gateway].partitioned { connect(gateway, at: now) }
        case .heal(let gateway, let life):
            guard gateways[gateway].life == life else { return }
            gateways[gateway].partitioned = false
            // A client that noticed the loss reconnects now; one that did not will when it does.
            if !gateways[gateway].online { connect(gateway, at: now) }
        case .startMeasuring:
            tally.startMeasuring(at: now, statistics: broker.statistics)
        }
    }

    func randomGateway(where condition: (Gateway) -> Bool) -> Int? {
        let candidates = gateways.indices.filter { condition(gateways[$0]) }
        guard !candidates.isEmpty else { return nil }
        return candidates[Int(random.integer(in: 0...Int64(candidates.count - 1)))]
    }

    /// Whether a live gateway other than `excluded`, on the broker, hears `device` now.
    func heardElsewhere(_ device: Int, excluding excluded: Int, at now: Int64) -> Bool {
        radio.gatewaysByDevice[device].contains { gateway in
            gateway != excluded && !gateways[gateway].partitioned
                && gateways[gateway].machine?.hears(deviceNames[device], now: FleetInstant(milliseconds: now)) == true
        }
    }
}
