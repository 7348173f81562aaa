/// The payload of the retained `<base>/bridge/<gateway_id>/health` (`schemas/mqtt/bridge-health.schema.json`):
/// whether this gateway can do its job, in one message a fleet dashboard or an alert rule reads.
package struct HealthReport: Hashable, Sendable {
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
    package struct LastError: Hashable, Sendable {
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

    package var payload: [UInt8] {
        var writer = JSONWriter(reservingCapacity: 256)
        writer.beginObject()
        writer.field("status", status)
        writer.field("uptime", uptimeSeconds)
        writer.field("bluez_present", bluezPresent)
        writer.field("adapter_powered", adapterPowered)
        writer.field("broker_reconnects", brokerReconnects)
        writer.key("devices")
        writer.beginObject()
        writer.field("known", devicesKnown)
        writer.field("connected", devicesConnected)
        if let devicesOwned { writer.field("owned", devicesOwned) }
        writer.endObject()
        writer.key("queues")
        writer.beginObject()
        for queue in queues.sorted(by: { $0.name < $1.name }) { writer.field(queue.name, queue.depth) }
        writer.endObject()
        writer.key("last_error")
        if let lastError {
            writer.beginObject()
            writer.field("uptime", lastError.atUptimeSeconds)
            writer.field("message", String(lastError.message.prefix(Self.maximumErrorLength)))
            writer.endObject()
        } else {
            writer.null()
        }
        writer.endObject()
        return writer.bytes
    }

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
