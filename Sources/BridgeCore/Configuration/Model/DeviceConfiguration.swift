package import BluetoothCore

/// A validated entry of `devices:`: which peripheral, how to connect, what to bridge.
package struct DeviceConfiguration: Sendable, Hashable {
    /// How the device is recognised.
    package enum Selector: Sendable, Hashable {
        case address(BluetoothAddress)
        case match(namePrefix: String?, service: BluetoothUUID?, manufacturerID: UInt16?)
    }

    /// When Gattway holds a connection.
    package enum ConnectPolicy: Sendable, Hashable {
        case always
        case onDemand(idleTimeout: Duration)
        /// Adverts only; nothing is ever connected.
        case never
    }

    package var name: String?
    package var selector: Selector
    package var connect: ConnectPolicy
    package var characteristics: [CharacteristicConfiguration]
    /// Pair (and bond) before use when bluetoothd does not hold keys for the device yet.
    package var pairing: Pairing?
    /// How advertisements are decoded into `<device>/state`.
    package var decoder: DecoderSelection = .auto
    /// Where the AES key of an encrypted format comes from; read when Gattway starts, never logged.
    package var bindkey: SecretSource?
    /// What Home Assistant discovery says of the device and its measurements beyond what Gattway infers.
    package var homeAssistant = HomeAssistantDeviceOverrides()

    /// A secret kept out of the configuration file: a file of its own, or an environment variable.
    package enum SecretSource: Sendable, Hashable {
        case file(String)
        case environment(String)
    }

    /// How to pair: Just Works without a passkey; with one, it is entered or compared with what the device shows.
    package struct Pairing: Sendable, Hashable {
        package var passkey: UInt32?

        package init(passkey: UInt32? = nil) { self.passkey = passkey }
    }

    package init(
        name: String?, selector: Selector, connect: ConnectPolicy = .always,
        characteristics: [CharacteristicConfiguration] = [], pairing: Pairing? = nil
    ) {
        self.name = name
        self.selector = selector
        self.connect = connect
        self.characteristics = characteristics
        self.pairing = pairing
    }

    /// The `<device>` topic level when the configuration fixes it: the friendly name, else the address as
    /// 12 lower-case hex digits. Nil for an unnamed `match` device (each match uses its own address).
    package var topicName: String? {
        if let name { return name }
        if case .address(let address) = selector { return address.topicName }
        return nil
    }
}

/// A validated remote characteristic to bridge.
package struct CharacteristicConfiguration: Sendable, Hashable {
    /// How `/set` writes.
    package enum WriteType: String, Sendable, Hashable {
        case withResponse = "with_response"
        case withoutResponse = "without_response"
    }

    package var name: String?
    package var service: BluetoothUUID
    package var uuid: BluetoothUUID
    package var notify: Bool
    package var read: Bool
    /// Nil: not writable; `/set` is refused.
    package var write: WriteType?
    package var codec: PayloadCodec
    /// Nil: the MQTT section's `retain`.
    package var retain: Bool?
    /// Overrides of the Home Assistant entity inferred for the characteristic.
    package var homeAssistant = HomeAssistantEntityOverrides()

    package init(
        name: String? = nil, service: BluetoothUUID, uuid: BluetoothUUID, notify: Bool = false,
        read: Bool = false, write: WriteType? = nil, codec: PayloadCodec = .raw, retain: Bool? = nil
    ) {
        self.name = name
        self.service = service
        self.uuid = uuid
        self.notify = notify
        self.read = read
        self.write = write
        self.codec = codec
        self.retain = retain
    }

    /// The `<characteristic>` topic levels: the configured name, else `<service-uuid>/<characteristic-uuid>`
    /// in their shortest forms.
    package var topicName: String { name ?? "\(service.shortestForm)/\(uuid.shortestForm)" }
}
