import BluetoothCore

/// Turns the file types into ``BridgeConfiguration``, collecting every problem with its path.
struct ConfigurationValidator {
    private(set) var errors: [ConfigurationError]
    /// Paths whose value failed to decode; "is required" is not reported again for them.
    private let failedPaths: Set<String>

    init(decodingErrors: [ConfigurationError]) {
        errors = decodingErrors
        failedPaths = Set(decodingErrors.map(\.path))
    }

    mutating func fail(_ path: String, _ message: String) {
        errors.append(ConfigurationError(path: path, message: message))
    }

    /// Reports a missing required value, unless its decoding already failed.
    mutating func require<Value>(_ value: Value?, _ path: String) -> Value? {
        if value == nil, !failedPaths.contains(path) { fail(path, "is required") }
        return value
    }

    mutating func validate(_ file: BridgeConfigurationFile) -> BridgeConfiguration? {
        let mqtt = validateMQTT(file.mqtt)
        let bluetooth = validateBluetooth(file.bluetooth)
        let devices = validateDevices(file.devices ?? [])
        // The peripheral advertises on the bluetooth adapter unless it names its own.
        let peripheral = file.peripheral.flatMap { validatePeripheral($0, defaultAdapter: bluetooth?.adapter) }
        let homeAssistant = validateHomeAssistant(file.homeassistant)
        let logLevel = enumeration(
            file.logLevel ?? ConfigurationDefaults.logLevel, "log_level",
            BridgeConfiguration.LogLevel.self)
        let stateDirectory = file.stateDir ?? ConfigurationDefaults.stateDirectory
        if stateDirectory.isEmpty { fail("state_dir", "must not be empty") }
        var metrics = MetricsSettings()
        if let listen = file.metrics?.prometheus?.listen {
            metrics.prometheusListen = ListenAddress(parsing: listen)
            if metrics.prometheusListen == nil {
                fail(
                    "metrics.prometheus.listen",
                    "\"\(listen)\" is not an address and port such as 127.0.0.1:9464 or [::1]:9464")
            }
        }
        let fleet = validateFleet(file.fleet, gatewayID: mqtt?.gatewayID, devices: devices)
        guard let mqtt, let bluetooth, let logLevel, errors.isEmpty else { return nil }
        if file.peripheral != nil, peripheral == nil { return nil }
        if file.homeassistant != nil, homeAssistant == nil { return nil }
        return BridgeConfiguration(
            mqtt: mqtt, bluetooth: bluetooth, devices: devices, peripheral: peripheral, homeAssistant: homeAssistant,
            stateDirectory: stateDirectory, logLevel: logLevel, metrics: metrics, fleet: fleet)
    }

    // MARK: Shared value checks

    mutating func uuid(_ text: String?, _ path: String) -> BluetoothUUID? {
        guard let text = require(text, path) else { return nil }
        do {
            return try BluetoothUUID(parsing: text)
        } catch {
            fail(path, error.message)
            return nil
        }
    }

    mutating func enumeration<Value: RawRepresentable<String> & CaseIterable>(
        _ text: String, _ path: String, _ type: Value.Type
    ) -> Value? {
        if let value = Value(rawValue: text) { return value }
        fail(path, "\"\(text)\" is not one of " + Value.allCases.map { $0.rawValue }.joined(separator: ", "))
        return nil
    }

    mutating func range<Value: Comparable & CustomStringConvertible>(
        _ value: Value, _ range: ClosedRange<Value>, _ path: String
    ) -> Value? {
        guard range.contains(value) else {
            fail(path, "\(value) is outside \(range.lowerBound)…\(range.upperBound)")
            return nil
        }
        return value
    }

    /// Seconds from 0.001 (one millisecond, the resolution durations are kept in) to 86400. A smaller positive
    /// value would round to zero, which timers and backoffs refuse at run time.
    mutating func duration(_ seconds: Double, _ path: String) -> Duration? {
        guard seconds.isFinite, seconds >= ConfigurationDefaults.minimumDurationSeconds, seconds <= 86_400 else {
            fail(path, "\(seconds) is not a duration in seconds between 0.001 and 86400")
            return nil
        }
        return .milliseconds(Int64((seconds * 1000).rounded()))
    }

    mutating func codec(_ text: String?, _ path: String) -> PayloadCodec? {
        do {
            return try PayloadCodec(parsing: text ?? ConfigurationDefaults.codec)
        } catch {
            fail(path, error.message)
            return nil
        }
    }

    mutating func hexBytes(_ text: String?, _ path: String) -> [UInt8]? {
        guard let text else { return nil }
        guard let bytes = Hex.decode(Array(text.utf8)) else {
            fail(path, "\"\(text)\" is not hex (expected pairs of hex digits)")
            return nil
        }
        return bytes
    }

    /// A name used as one topic level: not empty, at most 64 characters, no `/ + #`, NUL or control characters.
    mutating func topicLevelName(_ name: String?, _ path: String) -> String? {
        guard let name else { return nil }
        if let problem = TopicNaming.problem(withLevelName: name) {
            fail(path, "\"\(name)\" \(problem)")
            return nil
        }
        return name
    }

    /// An MQTT topic to publish or subscribe to exactly: no wildcards, no empty string, no NUL.
    mutating func exactTopic(_ topic: String?, _ path: String) -> String? {
        guard let topic else { return nil }
        if topic.isEmpty {
            fail(path, "must not be empty")
            return nil
        }
        if topic.contains("+") || topic.contains("#") || topic.contains("\0") {
            fail(path, "\"\(topic)\" must be an exact topic (no +, # or NUL)")
            return nil
        }
        return topic
    }
}
