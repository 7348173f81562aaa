/// Every configuration default, in one place.
///
/// `schemas/config.schema.json` documents the same values in its `default` fields; a test checks they agree.
package enum ConfigurationDefaults {
    package static let baseTopic = "gattway"
    package static let tlsInsecure = false
    package static let keepaliveSeconds = 60
    package static let keepaliveRange = 5...3600
    package static let metricsIntervalSeconds = 60
    package static let healthIntervalSeconds = 60
    package static let healthIntervalRange = 1...86_400
    /// The shortest duration any `…timeout`/`…interval`/`reconnect` option accepts: durations are milliseconds.
    package static let minimumDurationSeconds = 0.001
    /// Payload limits, sized for BLE: a 512-byte ATT value as hex or base64 plus a JSON envelope fits.
    package static let commandPayloadLimit = 2048
    package static let requestPayloadLimit = 4096
    package static let sourcePayloadLimit = 2048
    package static let payloadLimitRange = 64...1_048_576
    package static let metricsIntervalRange = 0...86_400
    package static let mqttProtocol = "5"
    package static let qos = 1
    package static let retain = true

    package static let adapter = "hci0"
    package static let scanDuplicates = false
    package static let scanTransport = "le"
    package static let rssiRange = -127...20
    package static let pathlossRange = 0...137
    package static let maxConcurrentConnects = 1
    package static let maxConcurrentConnectsRange = 1...8
    package static let connectTimeoutSeconds = 20.0
    package static let requestTimeoutSeconds = 10.0
    package static let maxTrackedDevices = 1000
    package static let advertMinIntervalSeconds = 5.0
    /// `bluetooth.advert_batch` when Gattway only listens (no device connects, no peripheral): 100 ms, about what a
    /// person still takes for at once (a button, a presence), and long enough that a batch's fixed cost is shared.
    /// Each batch begins with a wake-up that finds the code and data cold after the other processes ran; among 1,000
    /// sensors advertising once a second that cost some 200 µs a batch, so 20 ms batches cost twice the CPU an
    /// advertisement that 100 ms batches do (Benchmarks/README.md, "Longer batches").
    package static let advertBatchMilliseconds: Int64 = 100
    /// `bluetooth.advert_batch` when a device connects or the peripheral runs: a characteristic value or an incoming
    /// call that arrives during a batch waits for its end, and 20 ms keeps a notification that follows a quiet
    /// spell, or a central's request, prompt.
    package static let advertBatchWithLinksMilliseconds: Int64 = 20
    /// The longest batch: reports older than this would be stale for presence.
    package static let advertBatchMaximumSeconds = 1.0
    package static let unheardTimeoutSeconds = 600.0
    package static let reconnectInitialSeconds = 1.0
    package static let reconnectMaxSeconds = 60.0

    package static let connect = "always"
    package static let idleTimeoutSeconds = 30.0
    package static let pair = false
    package static let characteristicNotify = false
    package static let characteristicRead = false
    package static let codec = "raw"
    package static let maximumNameLength = 64

    package static let peripheralMaxConnections = 1
    /// Seconds a notification subscriber may go without progress, or hold the MQTT connection under backpressure.
    package static let peripheralStallLimitSeconds = 10.0
    package static let discoverable = true
    package static let servicePrimary = true
    package static let maxLength = 512
    package static let queueDepth = 64
    package static let queueDepthRange = 1...100_000
    package static let queueWhenFull = "backpressure"

    package static let homeAssistantDiscoveryPrefix = "homeassistant"
    package static let homeAssistantStatusTopic = "homeassistant/status"

    package static let fleetMargin = 6
    package static let fleetMarginRange = 1...60
    package static let fleetHoldSeconds = 10.0
    package static let fleetConnectionSlots = 7
    package static let fleetConnectionSlotsRange = 1...64

    package static let stateDirectory = "/var/lib/gattway"
    package static let logLevel = "info"
}
