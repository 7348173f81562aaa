/// The validated configuration: every value typed, every default applied.
package struct BridgeConfiguration: Sendable, Hashable {
    /// Log levels, as swift-log names them.
    package enum LogLevel: String, Sendable, Hashable, CaseIterable {
        case trace, debug, info, notice, warning, error, critical
    }

    package var mqtt: MQTTSettings
    package var bluetooth: BluetoothSettings
    package var devices: [DeviceConfiguration]
    package var peripheral: PeripheralConfiguration?
    /// Nil: no Home Assistant discovery.
    package var homeAssistant: HomeAssistantSettings?
    package var stateDirectory: String
    package var logLevel: LogLevel
    package var metrics = MetricsSettings()
    /// The ownership protocol's settings; it runs only when `mqtt.gatewayID` is set.
    package var fleet = FleetSettings()

    /// How long advertisement reports may be gathered: `bluetooth.advert_batch` when configured; otherwise 100 ms
    /// while Gattway only listens, and 20 ms once a device entry may connect or the peripheral runs, since a value or
    /// a call that arrives during a batch waits for its end (`ConfigurationDefaults`).
    package var advertBatch: Duration {
        if let configured = bluetooth.advertBatch { return configured }
        let links = peripheral != nil || devices.contains { $0.connect != .never }
        return .milliseconds(
            links
                ? ConfigurationDefaults.advertBatchWithLinksMilliseconds : ConfigurationDefaults.advertBatchMilliseconds
        )
    }
}

/// `metrics:`: how metrics leave the process besides `<base>/bridge/metrics`.
package struct MetricsSettings: Sendable, Hashable {
    /// Where the Prometheus `/metrics` endpoint listens; nil (the default): no endpoint.
    package var prometheusListen: ListenAddress?

    package init(prometheusListen: ListenAddress? = nil) {
        self.prometheusListen = prometheusListen
    }
}

/// A TCP listen address: an IPv4 or IPv6 literal (or `localhost`) and a port.
package struct ListenAddress: Sendable, Hashable, CustomStringConvertible {
    package var host: String
    package var port: Int

    package init(host: String, port: Int) {
        self.host = host
        self.port = port
    }

    /// `127.0.0.1:9464`, `[::1]:9464`, `0.0.0.0:9464`, `localhost:9464`.
    package init?(parsing text: String) {
        var host: Substring
        var port: Substring
        if text.hasPrefix("[") {
            guard let close = text.firstIndex(of: "]"), text[text.index(after: close)...].hasPrefix(":") else {
                return nil
            }
            host = text[text.index(after: text.startIndex)..<close]
            port = text[text.index(close, offsetBy: 2)...]
            guard host.contains(":"), host.allSatisfy({ $0.isHexDigit || $0 == ":" || $0 == "." }) else { return nil }
        } else {
            guard let colon = text.lastIndex(of: ":") else { return nil }
            host = text[..<colon]
            port = text[text.index(after: colon)...]
            let isIPv4 =
                host.split(separator: ".", omittingEmptySubsequences: false).count == 4
                && host.split(separator: ".", omittingEmptySubsequences: false).allSatisfy { UInt8($0) != nil }
            guard isIPv4 || host == "localhost" else { return nil }
        }
        guard !port.isEmpty, port.allSatisfy({ ("0"..."9").contains($0) }), let number = Int(port),
            (1...65_535).contains(number)
        else { return nil }
        self.host = String(host)
        self.port = number
    }

    package var description: String { host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)" }
}
