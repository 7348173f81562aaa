package import BluetoothCore

/// Validated `peripheral:` section: the local GATT server and its advertisement.
package struct PeripheralConfiguration: Sendable, Hashable {
    package var adapter: String
    package var maxConnections: Int
    package var advertisement: AdvertisementConfiguration
    package var services: [LocalService]
    /// How long one subscriber may go without progress, or hold the MQTT connection under backpressure, before it
    /// is dropped (`stall_limit`).
    package var stallLimit: Duration = .seconds(ConfigurationDefaults.peripheralStallLimitSeconds)
    /// The passkey (0…999999) a remote central pairing with this peripheral must confirm; nil accepts Just Works.
    package var passkey: UInt32? = nil

    /// True when a characteristic or descriptor needs an encrypted link: a remote central must pair first, so
    /// Gattway answers bluetoothd's pairing requests as the default agent.
    package var needsPairing: Bool {
        let flags = services.flatMap(\.characteristics).flatMap { characteristic -> [GATTCharacteristicFlag] in
            characteristic.flags + characteristic.descriptors.flatMap(\.flags)
        }
        return flags.contains { $0.needsEncryption }
    }

    /// A service of the local GATT application.
    package struct LocalService: Sendable, Hashable {
        package var uuid: BluetoothUUID
        package var primary: Bool
        package var characteristics: [LocalCharacteristic]
    }

    /// A characteristic served from MQTT.
    package struct LocalCharacteristic: Sendable, Hashable {
        package var uuid: BluetoothUUID
        package var name: String?
        package var flags: [GATTCharacteristicFlag]
        package var sourceTopic: String?
        package var sinkTopic: String?
        package var codec: PayloadCodec
        /// Already encoded with ``codec``.
        package var initialValue: [UInt8]?
        package var maxLength: Int
        package var queueDepth: Int
        package var whenFull: QueueFullPolicy
        package var descriptors: [LocalDescriptor]
    }

    /// A constant descriptor.
    package struct LocalDescriptor: Sendable, Hashable {
        package var uuid: BluetoothUUID
        package var flags: [GATTCharacteristicFlag]
        package var value: [UInt8]
    }

    /// What a full notification queue does with the next value.
    package enum QueueFullPolicy: String, Sendable, Hashable, CaseIterable {
        /// Stop taking messages from the broker until the link drains (default).
        case backpressure
        case dropOldest = "drop_oldest"
        case dropNewest = "drop_newest"
        /// Keep only the most recent value.
        case latest
    }
}

/// Validated `peripheral.advertise:`.
package struct AdvertisementConfiguration: Sendable, Hashable {
    /// Optional parts bluetoothd adds on request (`Includes`).
    package enum Include: String, Sendable, Hashable, CaseIterable {
        case txPower = "tx-power"
        case appearance
        case localName = "local-name"
    }

    package var localName: String?
    package var serviceUUIDs: [BluetoothUUID]
    package var manufacturerData: (companyID: UInt16, data: [UInt8])?
    package var serviceData: (uuid: BluetoothUUID, data: [UInt8])?
    package var discoverable: Bool
    package var includes: [Include]
    package var appearance: UInt16?

    package init(
        localName: String? = nil, serviceUUIDs: [BluetoothUUID] = [],
        manufacturerData: (companyID: UInt16, data: [UInt8])? = nil,
        serviceData: (uuid: BluetoothUUID, data: [UInt8])? = nil, discoverable: Bool = true,
        includes: [Include] = [], appearance: UInt16? = nil
    ) {
        self.localName = localName
        self.serviceUUIDs = serviceUUIDs
        self.manufacturerData = manufacturerData
        self.serviceData = serviceData
        self.discoverable = discoverable
        self.includes = includes
        self.appearance = appearance
    }

    package static func == (lhs: Self, rhs: Self) -> Bool {
        lhs.localName == rhs.localName && lhs.serviceUUIDs == rhs.serviceUUIDs
            && lhs.manufacturerData?.companyID == rhs.manufacturerData?.companyID
            && lhs.manufacturerData?.data == rhs.manufacturerData?.data
            && lhs.serviceData?.uuid == rhs.serviceData?.uuid && lhs.serviceData?.data == rhs.serviceData?.data
            && lhs.discoverable == rhs.discoverable && lhs.includes == rhs.includes && lhs.appearance == rhs.appearance
    }

    package func hash(into hasher: inout Hasher) {
        hasher.combine(localName)
        hasher.combine(serviceUUIDs)
        hasher.combine(manufacturerData?.data)
        hasher.combine(serviceData?.data)
    }
}
