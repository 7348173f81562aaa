/// Why a fleet payload from the broker was refused. Every gateway of a fleet reads every other's claims, so a
/// claim is parsed as hostile input: bounded, typed, and refused whole when any part is wrong.
package struct FleetPayloadError: Error, Hashable, Sendable, CustomStringConvertible {
    package let message: String
    package var description: String { message }
}

/// The fleet protocol's topics under the base topic.
package struct FleetTopics: Hashable, Sendable {
    package let base: String

    package init(base: String) { self.base = base }

    /// `<base>/fleet/owner/<device>`: the retained claim.
    package func owner(_ device: String) -> String { "\(base)/fleet/owner/\(device)" }
    /// `<base>/bridge/<gateway>/sightings`: what a gateway hears (retained).
    package func sightings(_ gateway: String) -> String { "\(base)/bridge/\(gateway)/sightings" }
    /// `<base>/bridge/<gateway>/state`: online/offline, the Last Will.
    package func state(_ gateway: String) -> String { "\(base)/bridge/\(gateway)/state" }
    /// `<base>/bridge/+/state`: every gateway's state.
    package var everyState: String { "\(base)/bridge/+/state" }

    /// The device of an owner topic, or nil when `topic` is not one.
    package func device(ofOwnerTopic topic: String) -> String? {
        let prefix = "\(base)/fleet/owner/"
        guard topic.hasPrefix(prefix) else { return nil }
        let device = String(topic.dropFirst(prefix.utf8.count))
        return TopicNaming.problem(withLevelName: device) == nil ? device : nil
    }

    /// The gateway of a state topic, or nil when `topic` is not one.
    package func gateway(ofStateTopic topic: String) -> String? {
        let prefix = "\(base)/bridge/"
        guard topic.hasPrefix(prefix), topic.hasSuffix("/state") else { return nil }
        let gateway = String(topic.dropFirst(prefix.utf8.count).dropLast("/state".utf8.count))
        return TopicNaming.problem(withLevelName: gateway) == nil ? gateway : nil
    }
}

extension FleetClaim {
    /// Larger claims are refused unparsed.
    package static let maximumPayloadSize = 512
    /// Terms stay within what every JSON reader holds exactly (2^53).
    package static let maximumTerm: UInt64 = 1 << 53

    /// `{"gateway":"hall","term":7,"rssi":-61,"pinned":false}`; a release has `"gateway":null` and no rssi.
    package var payload: [UInt8] { JSONPayload.encode(self) }

    /// Parses a claim; an empty payload (a cleared retained message) is nil.
    package static func parse(_ payload: [UInt8]) throws(FleetPayloadError) -> FleetClaim? {
        if payload.isEmpty { return nil }
        guard payload.count <= maximumPayloadSize else {
            throw FleetPayloadError(message: "claim of \(payload.count) bytes exceeds \(maximumPayloadSize)")
        }
        let json: JSONValue
        do {
            json = try JSONValue(
                parsing: payload, limits: JSONLimits(maximumDepth: 2, maximumWidth: 8, maximumValues: 16))
        } catch {
            throw FleetPayloadError(message: "claim is not JSON: \(error)")
        }
        guard json.isObject else { throw FleetPayloadError(message: "claim is not a JSON object") }
        var gateway: String?
        switch json["gateway"] {
        case .null: gateway = nil
        case .string(let name):
            if let problem = TopicNaming.problem(withLevelName: name) {
                throw FleetPayloadError(message: "claim gateway \(PayloadExcerpt.quote(Array(name.utf8))) \(problem)")
            }
            gateway = name
        default: throw FleetPayloadError(message: "claim gateway must be a string or null")
        }
        guard case .number(let termText) = json["term"], let term = UInt64(termText), term <= maximumTerm else {
            throw FleetPayloadError(message: "claim term must be an integer 0…\(maximumTerm)")
        }
        var rssi: Int?
        if let value = json["rssi"], value != .null {
            guard case .number(let text) = value, let signal = Int(text), (-127...20).contains(signal) else {
                throw FleetPayloadError(message: "claim rssi must be an integer -127…20")
            }
            rssi = signal
        }
        var pinned = false
        if let value = json["pinned"] {
            guard case .bool(let flag) = value else {
                throw FleetPayloadError(message: "claim pinned must be a boolean")
            }
            pinned = flag
        }
        if gateway == nil, pinned { throw FleetPayloadError(message: "a release cannot be pinned") }
        return FleetClaim(gateway: gateway, term: term, rssi: rssi, pinned: pinned)
    }
}

extension FleetSightings: Encodable {
    private enum CodingKeys: String, CodingKey {
        case gateway, devices
        case freeSlots = "free_slots"
    }

    /// `{"devices":[{"device":"lock","owned":true,"rssi":-61}],"free_slots":3,"gateway":"hall"}`.
    package var payload: [UInt8] { JSONPayload.encode(self) }

    package func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(gateway, forKey: .gateway)
        try container.encode(freeSlots, forKey: .freeSlots)
        try container.encode(devices, forKey: .devices)
    }
}

extension FleetSightings.Sighting: Encodable {
    private enum CodingKeys: String, CodingKey { case device, rssi, owned }

    package func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(device, forKey: .device)
        try container.encode(rssi, forKey: .rssi)
        try container.encode(owned, forKey: .owned)
    }
}

extension FleetClaim: Encodable {
    private enum CodingKeys: String, CodingKey { case gateway, term, rssi, pinned }

    /// A release says `"gateway": null` rather than leaving it out: readers tell it from a malformed claim.
    package func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(gateway, forKey: .gateway)
        try container.encode(term, forKey: .term)
        try container.encodeIfPresent(rssi, forKey: .rssi)
        try container.encode(pinned, forKey: .pinned)
    }
}
