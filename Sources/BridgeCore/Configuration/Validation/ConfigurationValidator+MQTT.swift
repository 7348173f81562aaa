extension ConfigurationValidator {
    mutating func validateMQTT(_ section: BridgeConfigurationFile.MQTTSection?) -> MQTTSettings? {
        guard let section = require(section, "mqtt") else { return nil }
        let broker = require(section.url, "mqtt.url").flatMap { brokerURL($0, "mqtt.url") }
        let baseTopic = section.baseTopic ?? ConfigurationDefaults.baseTopic
        if let problem = TopicNaming.problem(withBaseTopic: baseTopic) {
            fail("mqtt.base_topic", "\"\(baseTopic)\" \(problem)")
        }
        if let clientID = section.clientID, clientID.isEmpty || clientID.utf8.count > 65535 {
            fail("mqtt.client_id", "must be 1…65535 bytes")
        }
        var password: MQTTSettings.PasswordSource?
        switch (section.passwordFile, section.passwordEnv) {
        case (.some, .some): fail("mqtt", "password_file and password_env cannot both be set; choose one")
        case (.some(let path), nil): password = .file(path)
        case (nil, .some(let name)): password = .environment(name)
        case (nil, nil): break
        }
        if case .file(let path) = password, path.isEmpty { fail("mqtt.password_file", "must not be empty") }
        if case .environment(let name) = password, name.isEmpty { fail("mqtt.password_env", "must not be empty") }
        var tls: MQTTSettings.TLS?
        if let file = section.tls {
            if (file.certFile == nil) != (file.keyFile == nil) {
                fail("mqtt.tls", "cert_file and key_file must be given together")
            }
            tls = MQTTSettings.TLS(
                caFile: file.caFile, certificateFile: file.certFile, keyFile: file.keyFile,
                insecure: file.insecure ?? ConfigurationDefaults.tlsInsecure)
            if broker?.usesUnixSocket == true {
                fail("mqtt.tls", "is set but mqtt.url is a unix socket, which carries no TLS")
            } else if broker?.usesTLS == false {
                fail("mqtt.tls", "is set but mqtt.url uses mqtt://; use mqtts://")
            }
        }
        let keepalive = range(
            section.keepalive ?? ConfigurationDefaults.keepaliveSeconds,
            ConfigurationDefaults.keepaliveRange, "mqtt.keepalive")
        let version = enumeration(
            section.protocol ?? ConfigurationDefaults.mqttProtocol, "mqtt.protocol",
            MQTTProtocolName.self)
        let qos = range(section.qos ?? ConfigurationDefaults.qos, 0...2, "mqtt.qos")
        if let gateway = section.gatewayID, let problem = TopicNaming.problem(withLevelName: gateway) {
            fail("mqtt.gateway_id", "\"\(gateway)\" \(problem)")
        } else if let gateway = section.gatewayID, TopicLayout.bridgeLevelNames.contains(gateway) {
            // `bridge/<gateway>/…` must never read as one of a single gateway's own `bridge/…` topics.
            fail("mqtt.gateway_id", "\"\(gateway)\" is a name Gattway uses under bridge/")
        }
        let metricsInterval = range(
            section.metricsInterval ?? ConfigurationDefaults.metricsIntervalSeconds,
            ConfigurationDefaults.metricsIntervalRange, "mqtt.metrics_interval")
        let healthInterval = range(
            section.healthInterval ?? ConfigurationDefaults.healthIntervalSeconds,
            ConfigurationDefaults.healthIntervalRange, "mqtt.health_interval")
        let limits = section.payloadLimits
        let limitRange = ConfigurationDefaults.payloadLimitRange
        let command = range(
            limits?.command ?? ConfigurationDefaults.commandPayloadLimit, limitRange, "mqtt.payload_limits.command")
        let request = range(
            limits?.request ?? ConfigurationDefaults.requestPayloadLimit, limitRange, "mqtt.payload_limits.request")
        let source = range(
            limits?.source ?? ConfigurationDefaults.sourcePayloadLimit, limitRange, "mqtt.payload_limits.source")
        guard let broker, let keepalive, let version, let qos, let metricsInterval, let healthInterval, let command,
            let request, let source
        else { return nil }
        var settings = MQTTSettings(
            broker: broker, baseTopic: baseTopic, clientID: section.clientID, username: section.username,
            password: password, tls: tls, keepaliveSeconds: keepalive,
            protocolVersion: version == .v5 ? .v5 : .v311, qos: qos,
            retain: section.retain ?? ConfigurationDefaults.retain, gatewayID: section.gatewayID,
            metricsIntervalSeconds: metricsInterval)
        settings.payloadLimits = MQTTSettings.PayloadLimits(command: command, request: request, source: source)
        settings.healthIntervalSeconds = healthInterval
        return settings
    }

    /// `mqtt://host[:port]` or `mqtts://host[:port]` (default ports 1883 and 8883), or `unix:///path/to/socket`, a
    /// broker on this machine listening on a unix domain socket.
    private mutating func brokerURL(_ text: String, _ path: String) -> MQTTSettings.Broker? {
        let usesTLS: Bool
        var rest: Substring
        if text.hasPrefix("unix://") {
            let socket = String(text.dropFirst(7))
            guard socket.hasPrefix("/"), socket.count > 1, !socket.hasSuffix("/") else {
                fail(path, "\"\(text)\" needs the socket's absolute path: unix:///run/mosquitto/mosquitto.sock")
                return nil
            }
            guard !socket.utf8.contains(0) else {
                fail(path, "a unix socket path must not contain a NUL byte")
                return nil
            }
            guard socket.utf8.count <= MQTTSettings.Broker.maxSocketPathBytes else {
                fail(
                    path,
                    "\"\(text)\": a unix socket path holds at most \(MQTTSettings.Broker.maxSocketPathBytes) bytes")
                return nil
            }
            return MQTTSettings.Broker(socketPath: socket)
        } else if text.hasPrefix("mqtt://") {
            usesTLS = false
            rest = text.dropFirst(7)
        } else if text.hasPrefix("mqtts://") {
            usesTLS = true
            rest = text.dropFirst(8)
        } else {
            fail(path, "\"\(text)\" must start with mqtt://, mqtts:// or unix://")
            return nil
        }
        if rest.hasSuffix("/") { rest = rest.dropLast() }
        var host = rest
        var port = usesTLS ? 8883 : 1883
        if rest.hasPrefix("[") {
            // IPv6 literal: [::1]:1883
            guard let close = rest.firstIndex(of: "]") else {
                fail(path, "\"\(text)\" has an unterminated IPv6 address")
                return nil
            }
            host = rest[rest.index(after: rest.startIndex)..<close]
            let tail = rest[rest.index(after: close)...]
            if !tail.isEmpty {
                guard tail.hasPrefix(":"), let parsed = Int(tail.dropFirst()) else {
                    fail(path, "\"\(text)\" has an invalid port")
                    return nil
                }
                port = parsed
            }
        } else if let colon = rest.lastIndex(of: ":") {
            host = rest[..<colon]
            guard let parsed = Int(rest[rest.index(after: colon)...]) else {
                fail(path, "\"\(text)\" has an invalid port")
                return nil
            }
            port = parsed
        }
        guard !host.isEmpty, !host.contains("/"), !host.contains("@") else {
            fail(path, "\"\(text)\" needs a host (credentials belong in username and password_file)")
            return nil
        }
        guard (1...65535).contains(port) else {
            fail(path, "\"\(text)\" has a port outside 1…65535")
            return nil
        }
        return MQTTSettings.Broker(host: String(host), port: port, usesTLS: usesTLS)
    }
}

/// The accepted `mqtt.protocol` strings, for error messages that list them.
enum MQTTProtocolName: String, CaseIterable {
    case v5 = "5"
    case v311 = "3.1.1"
}
