import BluetoothCore

extension ConfigurationValidator {
    mutating func validateBluetooth(_ section: BridgeConfigurationFile.BluetoothSection?) -> BluetoothSettings? {
        let adapter = adapterName(section?.adapter, "bluetooth.adapter")
        let scanFile = section?.scan
        let uuids = (scanFile?.uuids ?? []).enumerated().compactMap { uuid($1, "bluetooth.scan.uuids[\($0)]") }
        let rssi = scanFile?.rssi.flatMap { range($0, ConfigurationDefaults.rssiRange, "bluetooth.scan.rssi") }
        let pathloss = scanFile?.pathloss.flatMap {
            range($0, ConfigurationDefaults.pathlossRange, "bluetooth.scan.pathloss")
        }
        if scanFile?.rssi != nil, scanFile?.pathloss != nil {
            fail("bluetooth.scan", "rssi and pathloss cannot both be set (BlueZ accepts only one)")
        }
        let transport = enumeration(
            scanFile?.transport ?? ConfigurationDefaults.scanTransport,
            "bluetooth.scan.transport", BluetoothSettings.Scan.Transport.self)
        let connects = range(
            section?.maxConcurrentConnects ?? ConfigurationDefaults.maxConcurrentConnects,
            ConfigurationDefaults.maxConcurrentConnectsRange, "bluetooth.max_concurrent_connects")
        let connectTimeout = duration(
            section?.connectTimeout ?? ConfigurationDefaults.connectTimeoutSeconds,
            "bluetooth.connect_timeout")
        let requestTimeout = duration(
            section?.requestTimeout ?? ConfigurationDefaults.requestTimeoutSeconds,
            "bluetooth.request_timeout")
        let tracked = range(
            section?.maxTrackedDevices ?? ConfigurationDefaults.maxTrackedDevices, 1...1_000_000,
            "bluetooth.max_tracked_devices")
        let advertInterval = duration(
            section?.advertMinInterval ?? ConfigurationDefaults.advertMinIntervalSeconds,
            "bluetooth.advert_min_interval")
        // nil when not given (the configuration picks it); refused values fail here.
        let batch = section?.advertBatch.map { advertBatch($0, "bluetooth.advert_batch") }
        let unheard = duration(
            section?.unheardTimeout ?? ConfigurationDefaults.unheardTimeoutSeconds, "bluetooth.unheard_timeout")
        let initial = duration(
            section?.reconnect?.initial ?? ConfigurationDefaults.reconnectInitialSeconds,
            "bluetooth.reconnect.initial")
        let maximum = duration(
            section?.reconnect?.max ?? ConfigurationDefaults.reconnectMaxSeconds,
            "bluetooth.reconnect.max")
        if let initial, let maximum, initial > maximum {
            fail("bluetooth.reconnect", "initial must not be greater than max")
        }
        guard let adapter, let transport, let connects, let connectTimeout, let requestTimeout, let tracked,
            let advertInterval, batch != .some(nil), let unheard, let initial, let maximum
        else { return nil }
        return BluetoothSettings(
            adapter: adapter,
            scan: BluetoothSettings.Scan(
                uuids: uuids, rssi: rssi, pathloss: pathloss,
                duplicates: scanFile?.duplicates ?? ConfigurationDefaults.scanDuplicates,
                pattern: scanFile?.pattern, transport: transport),
            maxConcurrentConnects: connects, connectTimeout: connectTimeout, requestTimeout: requestTimeout,
            maxTrackedDevices: tracked, advertMinInterval: advertInterval, advertBatch: batch ?? nil,
            reconnectInitial: initial, reconnectMax: maximum, unheardTimeout: unheard)
    }

    /// Seconds from 0.001 to `advertBatchMaximumSeconds`, or 0 for none (`.zero`); nil when refused.
    mutating func advertBatch(_ seconds: Double, _ path: String) -> Duration? {
        if seconds == 0 { return .zero }
        guard seconds.isFinite, seconds >= ConfigurationDefaults.minimumDurationSeconds,
            seconds <= ConfigurationDefaults.advertBatchMaximumSeconds
        else {
            fail(
                path,
                "\(seconds) is not 0 (no batching) or a duration in seconds between 0.001 and "
                    + "\(ConfigurationDefaults.advertBatchMaximumSeconds)")
            return nil
        }
        return .milliseconds(Int64((seconds * 1000).rounded()))
    }

    /// `hci` followed by digits.
    mutating func adapterName(_ text: String?, _ path: String) -> String? {
        let name = text ?? ConfigurationDefaults.adapter
        let digits = name.dropFirst(3)
        guard name.hasPrefix("hci"), !digits.isEmpty, digits.allSatisfy({ $0.isASCII && $0.isNumber }) else {
            fail(path, "\"\(name)\" is not an adapter name like hci0")
            return nil
        }
        return name
    }
}
