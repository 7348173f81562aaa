import BluetoothCore

extension ConfigurationValidator {
    mutating func validatePeripheral(
        _ section: BridgeConfigurationFile.PeripheralSection, defaultAdapter: String?
    ) -> PeripheralConfiguration? {
        // Without its own adapter the peripheral uses the validated bluetooth adapter; an invalid one is reported
        // once, at bluetooth.adapter.
        let adapter = section.adapter.map { adapterName($0, "peripheral.adapter") } ?? defaultAdapter
        let connections = range(
            section.maxConnections ?? ConfigurationDefaults.peripheralMaxConnections, 1...32,
            "peripheral.max_connections")
        let stallLimit = duration(
            section.stallLimit ?? ConfigurationDefaults.peripheralStallLimitSeconds, "peripheral.stall_limit")
        let advert = validateAdvertisement(section.advertise, "peripheral.advertise")
        var services: [PeripheralConfiguration.LocalService] = []
        for (index, file) in (section.services ?? []).enumerated() {
            let path = "peripheral.services[\(index)]"
            let uuid = uuid(file.uuid, "\(path).uuid")
            let characteristics = (file.characteristics ?? []).enumerated().compactMap {
                validateLocalCharacteristic($1, "\(path).characteristics[\($0)]")
            }
            if let uuid {
                services.append(
                    PeripheralConfiguration.LocalService(
                        uuid: uuid, primary: file.primary ?? ConfigurationDefaults.servicePrimary,
                        characteristics: characteristics))
            }
        }
        let passkey = section.passkey.flatMap { range($0, 0...999_999, "peripheral.passkey") }
        guard let adapter, let connections, let advert, let stallLimit else { return nil }
        return PeripheralConfiguration(
            adapter: adapter, maxConnections: connections, advertisement: advert,
            services: services, stallLimit: stallLimit, passkey: passkey.map { UInt32($0) })
    }

    private mutating func validateAdvertisement(
        _ file: BridgeConfigurationFile.AdvertiseSection?, _ path: String
    ) -> AdvertisementConfiguration? {
        let uuids = (file?.serviceUUIDs ?? []).enumerated().compactMap { uuid($1, "\(path).service_uuids[\($0)]") }
        var manufacturer: (companyID: UInt16, data: [UInt8])?
        if let data = file?.manufacturerData {
            let company = require(data.companyID, "\(path).manufacturer_data.company_id")
                .flatMap { range($0, 0...65535, "\(path).manufacturer_data.company_id") }
            let bytes = hexBytes(data.data ?? "", "\(path).manufacturer_data.data")
            if let company, let bytes { manufacturer = (UInt16(company), bytes) }
        }
        var serviceData: (uuid: BluetoothUUID, data: [UInt8])?
        if let data = file?.serviceData {
            let serviceUUID = uuid(data.uuid, "\(path).service_data.uuid")
            let bytes = hexBytes(data.data ?? "", "\(path).service_data.data")
            if let serviceUUID, let bytes { serviceData = (serviceUUID, bytes) }
        }
        let includes = (file?.includes ?? []).enumerated().compactMap {
            enumeration($1, "\(path).includes[\($0)]", AdvertisementConfiguration.Include.self)
        }
        let appearance = file?.appearance.flatMap { range($0, 0...65535, "\(path).appearance") }
        if let name = file?.localName {
            if name.isEmpty || name.utf8.count > AdvertisingBudget.scanResponseNameLimit {
                // bluetoothd puts the name in the 31-byte scan response and, past 29 bytes, sends a shortened
                // name without a word (src/shared/ad.c serialize_name()).
                fail(
                    "\(path).local_name",
                    "is \(name.utf8.count) bytes; the scan response holds a name of 1…"
                        + "\(AdvertisingBudget.scanResponseNameLimit) bytes (BlueZ would cut a longer one)")
            }
            if includes.contains(.localName) {
                // bluetoothd refuses the whole advertisement (src/advertising.c parse_local_name()).
                fail("\(path).local_name", "cannot be set together with includes: [local-name]")
            }
        }
        let advert = AdvertisementConfiguration(
            localName: file?.localName, serviceUUIDs: uuids, manufacturerData: manufacturer, serviceData: serviceData,
            discoverable: file?.discoverable ?? ConfigurationDefaults.discoverable, includes: includes,
            appearance: appearance.map { UInt16($0) })
        if let message = AdvertisingBudget(advert).overflowMessage { fail(path, message) }
        return advert
    }

    private mutating func validateLocalCharacteristic(
        _ file: BridgeConfigurationFile.LocalCharacteristicSection, _ path: String
    ) -> PeripheralConfiguration.LocalCharacteristic? {
        let uuid = uuid(file.uuid, "\(path).uuid")
        let name = topicLevelName(file.name, "\(path).name")
        let flags = flagList(file.flags, "\(path).flags", descriptor: false)
        let properties = flags.impliedProperties
        if flags.isEmpty, file.flags != nil, file.flags?.isEmpty == true { fail("\(path).flags", "must not be empty") }
        if file.flags == nil { fail("\(path).flags", "is required") }
        let source = exactTopic(file.sourceTopic, "\(path).source_topic")
        let sink = exactTopic(file.sinkTopic, "\(path).sink_topic")
        let notifies = properties.contains(.notify) || properties.contains(.indicate)
        let writable = properties.contains(.write) || properties.contains(.writeWithoutResponse)
        if notifies, file.sourceTopic == nil { fail(path, "notify/indicate needs a source_topic to take values from") }
        if writable, file.sinkTopic == nil {
            fail(path, "write/write-without-response needs a sink_topic to publish writes to")
        }
        if file.sourceTopic != nil, !notifies, !properties.contains(.read) {
            fail("\(path).source_topic", "is set but the flags allow neither read, notify nor indicate")
        }
        if file.sinkTopic != nil, !writable { fail("\(path).sink_topic", "is set but the flags allow no write") }
        let codec = codec(file.codec, "\(path).codec")
        let maxLength = range(file.maxLength ?? ConfigurationDefaults.maxLength, 1...512, "\(path).max_length")
        var initial: [UInt8]?
        if let text = file.initialValue, let codec {
            do {
                initial = try codec.encode(payload: Array(text.utf8))
                if let maxLength, let count = initial?.count, count > maxLength {
                    fail("\(path).initial_value", "is \(count) bytes, longer than max_length \(maxLength)")
                }
            } catch {
                fail("\(path).initial_value", "cannot be encoded with \(codec): \(error.message)")
            }
        }
        let depth = range(
            file.queue?.depth ?? ConfigurationDefaults.queueDepth, ConfigurationDefaults.queueDepthRange,
            "\(path).queue.depth")
        let whenFull = enumeration(
            file.queue?.whenFull ?? ConfigurationDefaults.queueWhenFull, "\(path).queue.when_full",
            PeripheralConfiguration.QueueFullPolicy.self)
        var descriptors: [PeripheralConfiguration.LocalDescriptor] = []
        for (index, descriptor) in (file.descriptors ?? []).enumerated() {
            let descriptorPath = "\(path).descriptors[\(index)]"
            let descriptorUUID = self.uuid(descriptor.uuid, "\(descriptorPath).uuid")
            let descriptorFlags = flagList(descriptor.flags ?? ["read"], "\(descriptorPath).flags", descriptor: true)
            let value = hexBytes(descriptor.value ?? "", "\(descriptorPath).value")
            if let descriptorUUID, let value {
                descriptors.append(.init(uuid: descriptorUUID, flags: descriptorFlags, value: value))
            }
        }
        guard let uuid, let codec, let maxLength, let depth, let whenFull, file.name == nil || name != nil else {
            return nil
        }
        return PeripheralConfiguration.LocalCharacteristic(
            uuid: uuid, name: name, flags: flags, sourceTopic: source, sinkTopic: sink, codec: codec,
            initialValue: initial, maxLength: maxLength, queueDepth: depth, whenFull: whenFull, descriptors: descriptors
        )
    }

    private mutating func flagList(_ texts: [String]?, _ path: String, descriptor: Bool) -> [GATTCharacteristicFlag] {
        var flags: [GATTCharacteristicFlag] = []
        for (index, text) in (texts ?? []).enumerated() {
            guard let flag = GATTCharacteristicFlag(rawValue: text) else {
                fail(
                    "\(path)[\(index)]",
                    "\"\(text)\" is not a BlueZ \(descriptor ? "descriptor" : "characteristic") flag")
                continue
            }
            if descriptor, !flag.isAllowedOnDescriptor {
                fail("\(path)[\(index)]", "\"\(text)\" is not a BlueZ descriptor flag")
                continue
            }
            flags.append(flag)
        }
        return flags
    }
}
