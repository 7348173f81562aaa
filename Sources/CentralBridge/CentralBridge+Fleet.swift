import BluetoothCore
import BridgeCore
import CoreMetrics
import Logging
import MQTTCore
import Synchronization

/// The fleet ownership protocol, driven by the central bridge (README, "Fleets").
///
/// The decisions are `FleetOwnership`'s; this extension only feeds it (signals of tracked devices, claims and
/// gateway states from the broker, link failures, broker connection changes, ticks of the bridge's clock) and
/// carries out what it returns, in order. Ownership gates what reaches the broker about a device: only its owner
/// connects it, publishes its values, availability, adverts and decoded state, and executes its `/set` and `/get`.
extension CentralBridge {
    /// How often the machine is told that time passed, and told again what is heard. Its timers (takeover delay,
    /// hold, settle, loss) are all multiples of this or far longer.
    static let fleetTickInterval: Duration = .milliseconds(250)

    // MARK: Gates

    /// Whether this gateway may connect, publish and command the tracked device at `path`: always without a
    /// fleet; in a fleet only while it owns the device.
    func fleetAllows(_ path: String) -> Bool {
        guard let fleet else { return true }
        guard let topic = devices[path]?.topic else { return false }
        return fleet.machine.owns(topic)
    }

    var fleetNow: FleetInstant {
        FleetInstant(milliseconds: started.duration(to: clock.now).fleetMilliseconds)
    }

    // MARK: Inputs

    /// The clock of the protocol: one task of `run()`, ticking on the bridge's injected clock.
    func runFleetClock() async {
        // Deadlines on a fixed grid, not a sleep after each tick: a tick never slips by the time the last one took.
        var next = clock.now
        fleetTick()
        while !Task.isCancelled, !shuttingDown {
            next = next.advanced(by: Self.fleetTickInterval)
            // Behind by more than a tick (the process was stopped, say): skip what was missed rather than burst.
            if next.advanced(by: Self.fleetTickInterval) < clock.now { next = clock.now }
            do { try await clock.sleep(until: next, tolerance: nil) } catch { return }
            fleetTick()
        }
    }

    /// Makes the subscriptions the machine asks for, one at a time and in order.
    nonisolated func runFleetSubscriptions(_ changes: AsyncStream<FleetSubscriptionChange>) async {
        for await change in changes {
            do {
                switch change {
                case .subscribe(let filter):
                    // Plain options: this gateway's own claims must come back (the echo confirms them), and the
                    // retained claim with the subscription is the point.
                    try await mqtt.subscribe(filter, qos: .atLeastOnce, options: .plain)
                case .unsubscribe(let filter):
                    try await mqtt.unsubscribe(filter)
                }
            } catch {
                // Remembered by the client: a subscription is made again on the next connect.
                logger.warning("mqtt.subscribe.failed", metadata: ["mqtt.topic": "\(change)", "error": "\(error)"])
            }
        }
    }

    private func fleetTick() {
        guard fleet != nil else { return }
        let now = fleetNow
        for (path, device) in devices.sorted(by: { $0.key < $1.key }) {
            fleetHeard(path, device: device, now: now)
        }
        fleetHandle(.tick, now: now)
        fleetTicks.add(1, ordering: .releasing)
    }

    /// Tells the machine the signal of a tracked device, when BlueZ still hears it (or this gateway holds a live
    /// link to it, which counts as hearing it at the last signal known).
    private func fleetHeard(_ path: String, device: TrackedDevice, now: FleetInstant) {
        guard var fleet else { return }
        if let deafUntil = fleet.deafUntil[device.topic] {
            guard now >= deafUntil else { return }
            fleet.deafUntil[device.topic] = nil
        }
        let state = tree.devices[path]
        let rssi: Int?
        if let heard = state?.rssi {
            rssi = Int(heard)
            fleet.lastRSSI[device.topic] = Int(heard)
        } else if state?.connected ?? false, fleet.machine.owns(device.topic) {
            rssi = fleet.lastRSSI[device.topic]
        } else {
            rssi = nil
        }
        self.fleet = fleet
        guard let rssi else { return }
        let kind: FleetDeviceKind = if case .never = device.policy { .passive } else { .connectable }
        fleetHandle(.heard(device: device.topic, kind: kind, rssi: rssi), now: now)
    }

    /// A device was tracked: tell the machine at once, so that its claim topic is subscribed without waiting.
    func fleetDeviceTracked(_ path: String) {
        guard fleet != nil, let device = devices[path] else { return }
        fleetHeard(path, device: device, now: fleetNow)
    }

    /// Connects that may fail in a row before the owner gives the device up: a single failure is routine (the
    /// previous owner's link may still be closing, the device may have been busy).
    static let fleetConnectFailuresBeforeRelease = 3

    /// The owner connected the device: its run of failed connects is over.
    func fleetLinkEstablished(_ path: String) {
        guard let topic = devices[path]?.topic else { return }
        fleet?.connectFailures[topic] = nil
    }

    /// The owner's connect failed. After a run of them the device stops counting as heard for the loss time, so
    /// that the machine releases it and another gateway that hears it can take over.
    func fleetLinkFailed(_ path: String) {
        guard var fleet, let topic = devices[path]?.topic, fleet.machine.owns(topic) else { return }
        let failures = (fleet.connectFailures[topic] ?? 0) + 1
        guard failures >= Self.fleetConnectFailuresBeforeRelease else {
            self.fleet?.connectFailures[topic] = failures
            return
        }
        let now = fleetNow
        fleet.connectFailures[topic] = nil
        fleet.deafUntil[topic] = now + fleet.machine.policy.lostAfter
        self.fleet = fleet
        fleetHandle(.deviceLost(device: topic), now: now)
    }

    func fleetBrokerConnected() {
        guard let fleet else { return }
        fleetSubscriptions?.yield(.subscribe(fleet.topics.everyState))
        fleetHandle(.brokerConnected, now: fleetNow)
    }

    func fleetBrokerDisconnected() {
        fleetHandle(.brokerDisconnected, now: fleetNow)
    }

    /// A claim or a gateway's state from the broker; false when `message` is not on a fleet topic.
    func fleetMessageReceived(_ message: MQTTMessage) -> Bool {
        guard let fleet else { return false }
        if let device = fleet.topics.device(ofOwnerTopic: message.topic) {
            do {
                let claim = try FleetClaim.parse(message.payload)
                if let owner = claim?.gateway, owner != fleet.machine.gateway {
                    self.fleet?.lastOtherOwner[device] = owner
                }
                fleetHandle(.claimObserved(device: device, claim: claim), now: fleetNow)
            } catch {
                fleetRefused(message, reason: "\(error)")
            }
            return true
        }
        // `bridge/+/state` only: a request verb named `state` (`bridge/<gateway>/request/state`) is a request.
        if let gateway = fleet.topics.gateway(ofStateTopic: message.topic) {
            switch message.payload {
            case Array("online".utf8): fleetHandle(.gatewayState(gateway: gateway, online: true), now: fleetNow)
            // An empty retained message clears the state: the gateway is gone as much as one whose Last Will fired.
            case Array("offline".utf8), []:
                fleetHandle(.gatewayState(gateway: gateway, online: false), now: fleetNow)
            default: fleetRefused(message, reason: "a gateway state is online or offline")
            }
            return true
        }
        return false
    }

    private func fleetRefused(_ message: MQTTMessage, reason: String) {
        fleet?.messagesRefused.increment()
        if case .log(let suppressed) = refusals.report(
            "fleet", topic: message.topic, at: started.duration(to: clock.now))
        {
            logger.warning(
                "fleet.message.refused",
                metadata: [
                    "mqtt.topic": "\(PayloadExcerpt.quote(Array(message.topic.utf8), maximumBytes: 128))",
                    "error": "\(reason)", "payload.excerpt": "\(PayloadExcerpt.quote(message.payload))",
                    "suppressed_since_last": "\(suppressed)",
                ])
        }
    }

    // MARK: Actions

    /// Feeds one event to the machine and carries out its actions in order.
    private func fleetHandle(_ event: FleetEvent, now: FleetInstant) {
        guard var fleet else { return }
        let actions = fleet.machine.handle(event, now: now)
        self.fleet = fleet
        for action in actions { perform(action) }
        if !actions.isEmpty {
            let owned = self.fleet?.machine.ownedDevices.count ?? 0
            fleet.devicesOwned.record(owned)
            fleetOwned.store(owned, ordering: .relaxed)
        }
    }

    private func perform(_ action: FleetAction) {
        guard let fleet else { return }
        switch action {
        case .subscribeClaim(let device):
            fleetSubscriptions?.yield(.subscribe(fleet.topics.owner(device)))
        case .unsubscribeClaim(let device):
            fleetSubscriptions?.yield(.unsubscribe(fleet.topics.owner(device)))
        case .publishClaim(let device, let claim):
            fleet.claimsPublished.increment()
            outbox.send(
                MQTTMessage(topic: fleet.topics.owner(device), payload: claim.payload, qos: .atLeastOnce, retain: true))
        case .publishSightings(let sightings):
            outbox.send(
                MQTTMessage(
                    topic: fleet.topics.sightings(fleet.machine.gateway), payload: sightings.payload, qos: .atLeastOnce,
                    retain: true))
        case .connect(let device):
            guard let path = path(ofDeviceTopic: device) else { return }
            if case .always = devices[path]?.policy { startLink(path) }
        case .disconnect(let device):
            guard let path = path(ofDeviceTopic: device) else { return }
            releaseLink(path)
        case .startPublishing(let device):
            guard let path = path(ofDeviceTopic: device) else { return }
            if self.fleet?.lastOtherOwner.removeValue(forKey: device) != nil { fleet.ownershipChanges.increment() }
            logger.notice("fleet.device.owned", metadata: ["device.name": "\(device)"])
            if case .never = devices[path]?.policy { publishPassiveSnapshot(path) }
        case .stopPublishing(let device):
            guard let path = path(ofDeviceTopic: device) else { return }
            logger.notice("fleet.device.released", metadata: ["device.name": "\(device)"])
            // Values of a link about to close are no longer this gateway's to publish.
            values.setRoutes([:], ofDevice: path)
            closeSockets(path)
            // Nobody took it over (a release): say it is offline. When another gateway owns it, its availability
            // is that gateway's to publish, and an offline from here could land after its online.
            if fleet.machine.claim(of: device)?.gateway == nil, let topic = devices[path]?.topic {
                devices[path]?.online = false
                outbox.send(
                    MQTTMessage(
                        topic: routes.availabilityTopic(topic), text: "offline", qos: .atLeastOnce, retain: true))
            }
        }
    }

    /// A passive device this gateway starts owning: what the previous owner published is said again from here
    /// (availability, the newest advert, the last decoded state), since none of it may change for a while.
    private func publishPassiveSnapshot(_ path: String) {
        guard let device = devices[path] else { return }
        publishAvailability(path, online: true, force: true)
        if let state = tree.devices[path] {
            outbox.send(
                MQTTMessage(
                    topic: routes.advertTopic(device.topic), payload: AdvertPayload.json(of: state), qos: .atMostOnce,
                    retain: true))
        }
        let lastStatePayload = adverts.lastStatePayload(of: path)
        if !lastStatePayload.isEmpty {
            outbox.send(
                MQTTMessage(
                    topic: routes.stateTopic(device.topic), payload: lastStatePayload, qos: routes.qos,
                    retain: true))
        }
    }

    /// Another gateway owns the device now: end the link without saying offline (see `stopPublishing`).
    private func releaseLink(_ path: String) {
        guard devices[path] != nil else { return }
        devices[path]?.disconnectReason = "ownership_moved"
        let central = self.central
        spawn(forDevice: path) {
            // A failed disconnect leaves a link nothing publishes from: its sockets and routes are already gone.
            try? await central.disconnect(device: path, timeout: .seconds(10))
        }
    }

    private func path(ofDeviceTopic topic: String) -> String? {
        devices.first { $0.value.topic == topic }?.key
    }
}
