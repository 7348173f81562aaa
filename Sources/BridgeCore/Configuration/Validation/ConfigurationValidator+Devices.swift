import BluetoothCore

extension ConfigurationValidator {
    mutating func validateDevices(_ sections: [BridgeConfigurationFile.DeviceSection]) -> [DeviceConfiguration] {
        var devices: [DeviceConfiguration] = []
        var topicNames: [String: Int] = [:]
        for (index, section) in sections.enumerated() {
            let path = "devices[\(index)]"
            guard let device = validateDevice(section, path) else { continue }
            if let topic = device.topicName {
                if let first = topicNames[topic] {
                    fail(
                        "\(path).name", "\"\(topic)\" is already used by devices[\(first)]; device names must be unique"
                    )
                } else {
                    topicNames[topic] = index
                }
            }
            devices.append(device)
        }
        return devices
    }

    private mutating func validateDevice(_ section: BridgeConfigurationFile.DeviceSection, _ path: String)
        -> DeviceConfiguration?
    {
        let name = topicLevelName(section.name, "\(path).name")
        var selector: DeviceConfiguration.Selector?
        switch (section.address, section.match) {
        case (.some, .some): fail(path, "address and match cannot both be set; choose one")
        case (nil, nil): fail(path, "needs either address or match")
        case (.some(let text), nil):
            do {
                selector = .address(try BluetoothAddress(parsing: text))
            } catch {
                fail("\(path).address", error.message)
            }
        case (nil, .some(let match)):
            selector = deviceMatch(match, "\(path).match")
        }
        let connect = connectPolicy(section, path)
        var characteristics: [CharacteristicConfiguration] = []
        var topics: [String: Int] = [:]
        for (index, file) in (section.characteristics ?? []).enumerated() {
            let characteristicPath = "\(path).characteristics[\(index)]"
            guard let characteristic = validateCharacteristic(file, characteristicPath) else { continue }
            if let first = topics[characteristic.topicName] {
                fail(
                    characteristicPath,
                    "topic \"\(characteristic.topicName)\" is already used by characteristics[\(first)]; "
                        + "give each a unique name"
                )
            } else {
                topics[characteristic.topicName] = index
            }
            if connect == .never, characteristic.notify || characteristic.read || characteristic.write != nil {
                fail(characteristicPath, "notify, read and write need a connection, but the device has connect: never")
            }
            characteristics.append(characteristic)
        }
        let pairing = pairing(section, connect: connect, path)
        guard let selector, let connect, section.name == nil || name != nil else { return nil }
        var device = DeviceConfiguration(
            name: name, selector: selector, connect: connect, characteristics: characteristics, pairing: pairing)
        device.decoder = decoderSelection(section, characteristics: characteristics, path) ?? .none
        device.bindkey = bindkeySource(section, path)
        device.homeAssistant = homeAssistantDevice(section.homeassistant, "\(path).homeassistant")
        return device
    }

    /// `decoder:` (auto unless a characteristic already publishes on `<device>/state`, where decoded values go).
    private mutating func decoderSelection(
        _ section: BridgeConfigurationFile.DeviceSection, characteristics: [CharacteristicConfiguration],
        _ path: String
    ) -> DecoderSelection? {
        let stateTaken = characteristics.contains { $0.topicName == "state" }
        guard let text = section.decoder else { return stateTaken ? DecoderSelection.none : .auto }
        guard let selection = DecoderSelection(text) else {
            let names = ["auto", "none"] + AdvertisementFormat.allCases.map(\.rawValue)
            fail("\(path).decoder", "\"\(text)\" is not one of " + names.joined(separator: ", "))
            return nil
        }
        if selection != .none, stateTaken {
            fail(
                "\(path).decoder",
                "decoded values go to <device>/state, which a characteristic named state already uses")
        }
        return selection
    }

    private mutating func bindkeySource(
        _ section: BridgeConfigurationFile.DeviceSection, _ path: String
    ) -> DeviceConfiguration.SecretSource? {
        switch (section.bindkeyFile, section.bindkeyEnv) {
        case (.some, .some):
            fail(path, "bindkey_file and bindkey_env cannot both be set; choose one")
            return nil
        case (.some(let file), nil):
            if file.isEmpty { fail("\(path).bindkey_file", "must not be empty") }
            return .file(file)
        case (nil, .some(let variable)):
            if variable.isEmpty { fail("\(path).bindkey_env", "must not be empty") }
            return .environment(variable)
        case (nil, nil):
            return nil
        }
    }

    private mutating func pairing(
        _ section: BridgeConfigurationFile.DeviceSection, connect: DeviceConfiguration.ConnectPolicy?, _ path: String
    ) -> DeviceConfiguration.Pairing? {
        guard section.pair ?? ConfigurationDefaults.pair else {
            if section.passkey != nil { fail("\(path).passkey", "only applies with pair: true") }
            return nil
        }
        if connect == .never { fail("\(path).pair", "pairing needs a connection, but the device has connect: never") }
        let passkey = section.passkey.flatMap { range($0, 0...999_999, "\(path).passkey") }
        return DeviceConfiguration.Pairing(passkey: passkey.map { UInt32($0) })
    }

    private mutating func deviceMatch(_ match: BridgeConfigurationFile.MatchSection, _ path: String)
        -> DeviceConfiguration.Selector?
    {
        let service = match.service.flatMap { uuid($0, "\(path).service") }
        let manufacturer = match.manufacturerID.flatMap { range($0, 0...65535, "\(path).manufacturer_id") }
        if match.namePrefix == nil, match.service == nil, match.manufacturerID == nil {
            fail(path, "needs at least one of name_prefix, service, manufacturer_id")
            return nil
        }
        if match.namePrefix?.isEmpty == true { fail("\(path).name_prefix", "must not be empty") }
        if match.service != nil, service == nil { return nil }
        if match.manufacturerID != nil, manufacturer == nil { return nil }
        return .match(namePrefix: match.namePrefix, service: service, manufacturerID: manufacturer.map { UInt16($0) })
    }

    private mutating func connectPolicy(_ section: BridgeConfigurationFile.DeviceSection, _ path: String)
        -> DeviceConfiguration.ConnectPolicy?
    {
        let text = section.connect ?? ConfigurationDefaults.connect
        if section.idleTimeout != nil, text != "on_demand" {
            fail("\(path).idle_timeout", "only applies to connect: on_demand")
        }
        switch text {
        case "always": return .always
        case "never": return .never
        case "on_demand":
            guard
                let idle = duration(
                    section.idleTimeout ?? ConfigurationDefaults.idleTimeoutSeconds, "\(path).idle_timeout")
            else {
                return nil
            }
            return .onDemand(idleTimeout: idle)
        default:
            fail("\(path).connect", "\"\(text)\" is not one of always, on_demand, never")
            return nil
        }
    }

    private mutating func validateCharacteristic(
        _ file: BridgeConfigurationFile.CharacteristicSection, _ path: String
    ) -> CharacteristicConfiguration? {
        let name = topicLevelName(file.name, "\(path).name")
        let service = uuid(file.service, "\(path).service")
        let characteristic = uuid(file.uuid, "\(path).uuid")
        var write: CharacteristicConfiguration.WriteType?
        if let text = file.write {
            write = CharacteristicConfiguration.WriteType(rawValue: text)
            if write == nil { fail("\(path).write", "\"\(text)\" is not one of with_response, without_response") }
        }
        let codec = codec(file.codec, "\(path).codec")
        if let codec, write != nil, !codec.canEncode {
            fail("\(path).codec", "\(codec) cannot encode values, so the characteristic cannot be writable")
        }
        guard let service, let characteristic, let codec, file.name == nil || name != nil,
            file.write == nil || write != nil
        else { return nil }
        var validated = CharacteristicConfiguration(
            name: name, service: service, uuid: characteristic,
            notify: file.notify ?? ConfigurationDefaults.characteristicNotify,
            read: file.read ?? ConfigurationDefaults.characteristicRead, write: write, codec: codec, retain: file.retain
        )
        validated.homeAssistant = homeAssistantEntity(
            file.homeassistant, "\(path).homeassistant", writable: write != nil,
            readable: validated.notify || validated.read)
        return validated
    }
}
