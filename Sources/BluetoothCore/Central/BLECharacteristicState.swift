/// A remote GATT characteristic as the stack exports it.
package struct BLECharacteristicState: Sendable, Hashable {
    /// The characteristic's identifier at its central (a BlueZ object path).
    package var path: String
    package var uuid: BluetoothUUID?
    /// The identifier of the service the characteristic belongs to.
    package var servicePath: String
    package var flags: [String]
    package var notifying = false
    package var notifyAcquired: Bool?
    package var mtu: UInt16?

    package init(
        path: String, uuid: BluetoothUUID?, servicePath: String? = nil, flags: [String],
        properties: [BLECharacteristicProperty] = []
    ) {
        self.path = path
        self.uuid = uuid
        self.servicePath = servicePath ?? Self.parentPath(of: path)
        self.flags = flags
        apply(properties)
    }

    package mutating func apply(_ properties: [BLECharacteristicProperty]) {
        for property in properties {
            switch property {
            case .notifying(let value): notifying = value
            case .notifyAcquired(let value): notifyAcquired = value
            case .mtu(let value): mtu = value
            case .value: break  // values are events, not state: the tree keeps no copy
            }
        }
    }

    package var canNotify: Bool { flags.contains("notify") || flags.contains("indicate") }

    package static func parentPath(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return path }
        return String(path[..<slash])
    }
}

/// One property of a remote characteristic as the stack reports it.
package enum BLECharacteristicProperty: Sendable, Hashable {
    case notifying(Bool)
    case notifyAcquired(Bool?)
    case mtu(UInt16?)
    /// A new value: a notification under StartNotify, or a read's result.
    case value([UInt8])
}

/// One property of a local adapter.
package enum BLEAdapterProperty: Sendable, Hashable {
    case address(String?)
    case powered(Bool)
    case discovering(Bool)
}
