import BridgeCore

/// Counts what the fleet does, from the actions its state machines return (not from what they believe).
struct FleetTally {
    private var owners: [[Int]]
    private var lastOwner: [Int?]
    private var twoOwnersSince: [Int64?]
    /// Devices whose owner was killed while another gateway heard them: since when, and which gateway died.
    private var awaitingTakeover: [Int: (since: Int64, dead: Int)] = [:]
    private var willSeenAt: [Int: Int64] = [:]
    private var killedAt: [Int: Int64] = [:]
    private var measuring = false
    private var measuringSince: Int64 = 0
    private var statisticsAtStart = SimulatedBroker<FleetWorld.Wire>.Statistics()
    var outcome = FleetOutcome()
    var partitions = 0

    init(devices: Int) {
        owners = Array(repeating: [], count: devices)
        lastOwner = Array(repeating: nil, count: devices)
        twoOwnersSince = Array(repeating: nil, count: devices)
    }

    mutating func startMeasuring(at now: Int64, statistics: SimulatedBroker<FleetWorld.Wire>.Statistics) {
        measuring = true
        measuringSince = now
        statisticsAtStart = statistics
        partitions = 0
        for device in twoOwnersSince.indices where twoOwnersSince[device] != nil { twoOwnersSince[device] = now }
    }

    mutating func ownerStarted(_ device: Int, by gateway: Int, at now: Int64, world: FleetWorld) {
        guard !owners[device].contains(gateway) else { return }
        owners[device].append(gateway)
        if measuring, let previous = lastOwner[device], previous != gateway {
            outcome.ownerChanges += 1
            let previousState = world.gateways[previous]
            if previousState.machine != nil, !previousState.partitioned, previousState.online {
                outcome.ownerChangesWithoutFailure += 1
            }
        }
        lastOwner[device] = gateway
        if owners[device].count == 2 {
            twoOwnersSince[device] = now
            if measuring { outcome.twoOwnerEpisodes += 1 }
        }
        if let awaiting = awaitingTakeover[device], awaiting.dead != gateway {
            awaitingTakeover[device] = nil
            outcome.takeoverAfterKill.append(now - awaiting.since)
            if let will = willSeenAt[awaiting.dead], will >= awaiting.since {
                outcome.takeoverAfterWill.append(now - will)
            }
        }
    }

    mutating func ownerStopped(_ device: Int, by gateway: Int, at now: Int64) {
        guard let index = owners[device].firstIndex(of: gateway) else { return }
        owners[device].remove(at: index)
        if owners[device].count == 1, let since = twoOwnersSince[device] {
            twoOwnersSince[device] = nil
            if measuring { record(twoOwners: now - since) }
        }
    }

    private mutating func record(twoOwners duration: Int64) {
        outcome.twoOwnerMilliseconds += duration
        outcome.longestTwoOwnerMilliseconds = max(outcome.longestTwoOwnerMilliseconds, duration)
    }

    /// A gateway dies: it owns nothing from now on; what it owned and others hear must be taken over.
    mutating func killed(_ gateway: Int, at now: Int64, world: FleetWorld) {
        guard let machine = world.gateways[gateway].machine else { return }
        if measuring { outcome.kills += 1 }
        killedAt[gateway] = now
        willSeenAt[gateway] = nil
        for name in machine.ownedDevices {
            guard let device = world.deviceIndex[name] else { continue }
            ownerStopped(device, by: gateway, at: now)
            if measuring, world.heardElsewhere(device, excluding: gateway, at: now) {
                awaitingTakeover[device] = (now, gateway)
            }
        }
    }

    mutating func published(_ claim: FleetClaim) {
        guard measuring else { return }
        if claim.gateway == nil { outcome.releasesPublished += 1 } else { outcome.claimsPublished += 1 }
    }

    mutating func publishedSightings() {
        if measuring { outcome.sightingsPublished += 1 }
    }

    mutating func willSeen(of gateway: Int, at now: Int64) {
        if willSeenAt[gateway] == nil, let killed = killedAt[gateway], killed <= now { willSeenAt[gateway] = now }
    }

    mutating func finish(at end: Int64, world: FleetWorld) -> FleetOutcome {
        for device in twoOwnersSince.indices {
            if let since = twoOwnersSince[device] { record(twoOwners: end - since) }
        }
        // A takeover still awaited this close to the end may simply not have had its time.
        outcome.takeoversMissing = awaitingTakeover.values.filter { end - $0.since > 30_000 }.count
        outcome.takeoverAfterKill.sort()
        outcome.takeoverAfterWill.sort()
        outcome.partitions = partitions
        outcome.gateways = world.scenario.gateways
        outcome.devices = world.scenario.devices
        outcome.measuredMilliseconds = end - measuringSince
        outcome.published = world.broker.statistics.published - statisticsAtStart.published
        outcome.delivered = world.broker.statistics.delivered - statisticsAtStart.delivered
        let now = FleetInstant(milliseconds: end)
        for device in owners.indices {
            let heard = world.radio.gatewaysByDevice[device].contains { gateway in
                world.gateways[gateway].machine?.hears(world.deviceNames[device], now: now) == true
            }
            if heard { outcome.devicesHeardAtEnd += 1 }
            if owners[device].count == 1 { outcome.devicesOwnedOnceAtEnd += 1 }
            if owners[device].count > 1 { outcome.devicesOwnedSeveralTimesAtEnd += 1 }
        }
        return outcome
    }
}
