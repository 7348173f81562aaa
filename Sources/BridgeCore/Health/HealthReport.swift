/// The payload of the retained `<base>/bridge/<gateway_id>/health` (`schemas/mqtt/bridge-health.schema.json`):
/// whether this gateway can do its job, in one message a fleet dashboard or an alert rule reads.
package struct HealthReport: Hashable, Sendable, Encodable {
    /// A queue and how full it is.
    package struct Queue: Hashable, Sendable {
        package var name: String
        package var depth: Int

        package init(name: String, depth: Int) {
            self.name = name
            self.depth = depth
        }
    }

    /// The last error logged, with when (seconds of uptime) and what.
    package struct LastError: Hashable, Sendable, Encodable {
        package var atUptimeSeconds: Int
        package var message: String

        package init(atUptimeSeconds: Int, message: String) {
            self.atUptimeSeconds = atUptimeSeconds
            self.message = message
        }
    }

    package var uptimeSeconds: Int
    /// `org.bluez` has an owner on the system bus.
    package var bluezPresent: Bool
    /// The configured adapter exists and is powered.
    package var adapterPowered: Bool
    /// Connections to the broker after the first.
    package var brokerReconnects: Int
    /// Devices BlueZ knows on the adapter, and those connected.
    package var devicesKnown: Int
    package var devicesConnected: Int
    /// In a fleet (a gateway id is set), the devices this gateway owns; nil otherwise.
    package var devicesOwned: Int?
    package var queues: [Queue]
    package var lastError: LastError?

    package init(
        uptimeSeconds: Int, bluezPresent: Bool, adapterPowered: Bool, brokerReconnects: Int, devicesKnown: Int,
        devicesConnected: Int, devicesOwned: Int? = nil, queues: [Queue] = [], lastError: LastError? = nil
    ) {
        self.devicesOwned = devicesOwned
        self.uptimeSeconds = uptimeSeconds
        self.bluezPresent = bluezPresent
        self.adapterPowered = adapterPowered
        self.brokerReconnects = brokerReconnects
        self.devicesKnown = devicesKnown
        self.devicesConnected = devicesConnected
        self.queues = queues
        self.lastError = lastError
    }

    /// Healthy: BlueZ is there and the adapter is powered.
    package var status: String { bluezPresent && adapterPowered ? "ok" : "degraded" }

    /// The longest error message published; longer ones are cut (they come from logs, not from the payload budget).
    package static let maximumErrorLength = 256

    package var payload: [UInt8] { JSONPayload.encode(self) }

    /// Equal but for the uptime: nothing a reader would want to hear about at once.
    package func sameState(as other: HealthReport) -> Bool {
        var this = self
        this.uptimeSeconds = other.uptimeSeconds
        return this == other
    }
}

/// When to publish health: at once when the state changed, otherwise every `interval`.
package struct HealthSchedule: Sendable {
    package let interval: Duration
    private var lastPublished: (report: HealthReport, at: Duration)?

    package init(interval: Duration) {
        self.interval = interval
    }

    /// Whether `report`, taken at `now` (time since start), is to be published; if so it counts as published.
    package mutating func shouldPublish(_ report: HealthReport, now: Duration) -> Bool {
        if let last = lastPublished, last.report.sameState(as: report), now - last.at < interval { return false }
        lastPublished = (report, now)
        return true
    }
}

extension HealthReport {
    private enum CodingKeys: String, CodingKey {
        case status, uptime, devices, queues
        case bluezPresent = "bluez_present"
        case adapterPowered = "adapter_powered"
        case brokerReconnects = "broker_reconnects"
        case lastError = "last_error"
    }

    private struct Devices: Encodable {
        let known: Int
        let connected: Int
        /// In a fleet only: how many devices this gateway owns.
        let owned: Int?
    }

    package func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(status, forKey: .status)
        try container.encode(uptimeSeconds, forKey: .uptime)
        try container.encode(bluezPresent, forKey: .bluezPresent)
        try container.encode(adapterPowered, forKey: .adapterPowered)
        try container.encode(brokerReconnects, forKey: .brokerReconnects)
        try container.encode(
            Devices(known: devicesKnown, connected: devicesConnected, owned: devicesOwned), forKey: .devices)
        try container.encode(
            Dictionary(queues.map { ($0.name, $0.depth) }, uniquingKeysWith: max), forKey: .queues)
        // `null` rather than absent: the schema requires the key, so a reader can tell "no error" from an old gateway.
        try container.encode(lastError, forKey: .lastError)
    }
}

extension HealthReport.LastError {
    private enum CodingKeys: String, CodingKey { case uptime, message }

    package func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(atUptimeSeconds, forKey: .uptime)
        try container.encode(String(message.prefix(HealthReport.maximumErrorLength)), forKey: .message)
    }
}
