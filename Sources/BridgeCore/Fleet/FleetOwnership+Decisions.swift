extension FleetOwnership {
    func isHearing(_ record: FleetDeviceRecord, now: FleetInstant) -> Bool {
        now.since(record.lastHeard) < policy.lostAfter
    }

    func isPinnedHere(_ device: String) -> Bool { pins[device] == gateway }

    /// The gateway that owns the device as far as this one can tell: the claimed gateway, unless it is offline.
    func liveOwner(of record: FleetDeviceRecord) -> String? {
        guard let owner = record.claim?.gateway, !offlineGateways.contains(owner) else { return nil }
        return owner
    }

    /// Re-examines one device: loss, refresh, contest and takeover.
    mutating func evaluate(_ device: String, now: FleetInstant, into actions: inout [FleetAction]) {
        guard var record = devices[device] else { return }
        defer { if devices[device] != nil { devices[device] = record } }
        let hearing = isHearing(record, now: now)

        if !hearing, !record.owning, record.pending == nil, now.since(record.lastHeard) >= policy.forgetAfter {
            devices[device] = nil
            if brokerConnected { actions.append(.unsubscribeClaim(device: device)) }
            return
        }
        guard brokerConnected, let subscribedAt = record.subscribedAt else { return }

        if record.owning {
            if hearing {
                refreshClaimIfDue(device, &record, now: now, into: &actions)
            } else {
                // Lost it: give it up so that a gateway that still hears it takes over at once.
                stop(device, &record, into: &actions)
                let release = FleetClaim.release(after: record.claim?.term ?? 0)
                record.claim = release
                actions.append(.publishClaim(device: device, claim: release))
            }
            return
        }
        if let startAt = record.startAt {
            if record.claim?.gateway != gateway {
                record.startAt = nil
            } else if now >= startAt {
                record.startAt = nil
                start(device, &record, now: now, into: &actions)
                return
            } else {
                return
            }
        }
        if let since = record.pendingSince, record.pending != nil {
            guard now.since(since) >= policy.echoTimeout else { return }
            record.pending = nil
            record.pendingSince = nil
        }
        guard hearing, now.since(subscribedAt) >= policy.settle else {
            record.betterSince = nil
            return
        }
        if record.claim?.gateway == gateway {
            // A claim of this gateway's that it does not act on (left retained from before a restart or a
            // broker loss): renew it in a new term, or release it when there is no slot for it.
            if hasSlot(for: record) {
                claim(device, &record, now: now, into: &actions)
            } else {
                let release = FleetClaim.release(after: record.claim?.term ?? 0)
                record.claim = release
                actions.append(.publishClaim(device: device, claim: release))
            }
            return
        }
        guard hasSlot(for: record) else {
            record.betterSince = nil
            return
        }
        if isPinnedHere(device) {
            claim(device, &record, now: now, into: &actions)
            return
        }
        guard let owner = liveOwner(of: record) else {
            let vacantSince = record.vacantSince ?? now
            record.vacantSince = vacantSince
            if now.since(vacantSince) >= takeoverDelay(for: device, rssi: record.rssi ?? Double(policy.weakRSSI)) {
                claim(device, &record, now: now, into: &actions)
            }
            return
        }
        record.vacantSince = nil
        contest(device, &record, owner: owner, now: now, into: &actions)
    }

    /// Signal hysteresis: claim only after being better than the owner by the margin for the whole hold time.
    private func contest(
        _ device: String, _ record: inout FleetDeviceRecord, owner: String, now: FleetInstant,
        into actions: inout [FleetAction]
    ) {
        guard let claim = record.claim, !claim.pinned, pins[device] != owner, let mine = record.rssi else {
            record.betterSince = nil
            return
        }
        let theirs = Double(claim.rssi ?? policy.weakRSSI)
        guard mine >= theirs + Double(policy.margin) else {
            record.betterSince = nil
            return
        }
        let since = record.betterSince ?? now
        record.betterSince = since
        if now.since(since) >= policy.hold {
            self.claim(device, &record, now: now, into: &actions)
        }
    }

    private func claim(
        _ device: String, _ record: inout FleetDeviceRecord, now: FleetInstant, into actions: inout [FleetAction]
    ) {
        let claim = FleetClaim(
            gateway: gateway, term: (record.claim?.term ?? 0) + 1, rssi: record.roundedRSSI,
            pinned: isPinnedHere(device))
        record.pending = claim
        record.pendingSince = now
        record.betterSince = nil
        record.vacantSince = nil
        actions.append(.publishClaim(device: device, claim: claim))
    }

    private func refreshClaimIfDue(
        _ device: String, _ record: inout FleetDeviceRecord, now: FleetInstant, into actions: inout [FleetAction]
    ) {
        guard var claim = record.claim, claim.gateway == gateway, let rssi = record.roundedRSSI else { return }
        let last = record.lastPublished ?? (claim.rssi, now)
        let elapsed = now.since(last.at)
        let drifted = abs(rssi - (last.rssi ?? rssi)) >= policy.refreshDelta
        guard (drifted && elapsed >= policy.refreshMinimumInterval) || elapsed >= policy.refreshInterval else { return }
        claim.rssi = rssi
        record.claim = claim
        record.lastPublished = (rssi, now)
        actions.append(.publishClaim(device: device, claim: claim))
    }

    func hasSlot(for record: FleetDeviceRecord) -> Bool {
        record.kind == .passive || record.owning || record.pending != nil || record.startAt != nil || freeSlots > 0
    }

    func start(
        _ device: String, _ record: inout FleetDeviceRecord, now: FleetInstant, into actions: inout [FleetAction]
    ) {
        record.owning = true
        record.lastPublished = (record.claim?.rssi, now)
        if record.kind == .connectable { actions.append(.connect(device: device)) }
        actions.append(.startPublishing(device: device))
    }

    func stop(_ device: String, _ record: inout FleetDeviceRecord, into actions: inout [FleetAction]) {
        record.owning = false
        actions.append(.stopPublishing(device: device))
        if record.kind == .connectable { actions.append(.disconnect(device: device)) }
    }

    /// From nothing for the strongest signal to `takeoverSpread` for the weakest, plus a fixed offset per device
    /// and gateway (a hash, the same on every run) so that equally strong gateways do not claim together.
    func takeoverDelay(for device: String, rssi: Double) -> Duration {
        let range = Double(max(1, policy.strongRSSI - policy.weakRSSI))
        let weakness = min(1, max(0, (Double(policy.strongRSSI) - rssi) / range))
        let spread = Double(policy.takeoverSpread.fleetMilliseconds) * weakness
        let jitterRange = UInt64(max(1, policy.takeoverJitter.fleetMilliseconds))
        let jitter = Self.stableHash(gateway + "\u{0}" + device) % jitterRange
        return .milliseconds(Int64(spread) + Int64(jitter))
    }

    /// FNV-1a: unlike `Hasher`, the same on every run and every machine.
    static func stableHash(_ text: String) -> UInt64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in text.utf8 {
            hash ^= UInt64(byte)
            hash &*= 0x100_0000_01b3
        }
        return hash
    }

    mutating func publishSightingsIfDue(now: FleetInstant, into actions: inout [FleetAction]) {
        guard brokerConnected else { return }
        if let last = lastSightingsAt, now.since(last) < policy.sightingsInterval { return }
        let sightings = FleetSightings(
            gateway: gateway, freeSlots: freeSlots,
            devices: devices.keys.sorted().compactMap { device in
                guard let record = devices[device], isHearing(record, now: now), let rssi = record.roundedRSSI else {
                    return nil
                }
                return FleetSightings.Sighting(device: device, rssi: rssi, owned: record.owning)
            })
        lastSightingsAt = now
        guard sightings != lastSightings else { return }
        lastSightings = sightings
        actions.append(.publishSightings(sightings))
    }
}
