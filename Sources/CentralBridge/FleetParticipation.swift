import BridgeCore
import Metrics

/// The central bridge's side of the fleet ownership protocol: the pure `FleetOwnership` machine and what the
/// bridge remembers around it. Present only when `mqtt.gateway_id` is set.
struct FleetParticipation: Sendable {
    var machine: FleetOwnership
    let topics: FleetTopics
    /// Device → the last gateway other than this one seen claiming it: a start after one counts as an ownership
    /// change (`FleetMetricNames.ownershipChanges`).
    var lastOtherOwner: [String: String] = [:]
    /// Device → the last signal heard from it, which a live link keeps on reporting (many devices stop advertising
    /// while connected).
    var lastRSSI: [String: Int] = [:]
    /// Device → connects that failed in a row since it was last connected.
    var connectFailures: [String: Int] = [:]
    /// Device → until when it counts as not heard: its link failed, so gateways that may reach it take over.
    var deafUntil: [String: FleetInstant] = [:]

    let devicesOwned = Gauge(label: FleetMetricNames.devicesOwned)
    let ownershipChanges = Counter(label: FleetMetricNames.ownershipChanges)
    let claimsPublished = Counter(label: FleetMetricNames.claimsPublished)
    /// Claims and gateway states that did not parse: refused whole.
    let messagesRefused = Counter(label: "gattway.fleet.messages_refused")
    /// `/set` and `/get` of devices another gateway owns: left to their owner.
    let commandsLeftToOwner = Counter(label: "gattway.fleet.commands_left_to_owner")

    init(gateway: String, base: String, settings: FleetSettings) {
        machine = FleetOwnership(
            gateway: gateway, policy: settings.policy, connectionSlots: settings.connectionSlots, pins: settings.pinned)
        topics = FleetTopics(base: base)
    }
}

/// A subscription change the fleet protocol asks for; made in order by one task of the bridge.
enum FleetSubscriptionChange: Sendable {
    case subscribe(String)
    case unsubscribe(String)
}
